//! `group-loadgen`: drive a `group-server` over the wire and report (see `--help`).

use std::process::ExitCode;

use group_loadgen::{LoadgenError, Options, USAGE, render_table, run, write_outputs};

fn main() -> ExitCode {
    let options = match Options::from_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(LoadgenError::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("group-loadgen: {e}");
            return ExitCode::from(2);
        }
    };
    let reports = match run(&options) {
        Ok(reports) => reports,
        Err(e) => {
            eprintln!("group-loadgen: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", render_table(&reports));
    if let Err(e) = write_outputs(&options, &reports) {
        eprintln!("group-loadgen: {e}");
        return ExitCode::FAILURE;
    }
    println!("wrote {} and {}", options.json.display(), options.svg.display());
    let failed: Vec<&str> = reports.iter().filter(|r| r.is_failure()).map(|r| r.scenario.as_str()).collect();
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("group-loadgen: could not run: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}
