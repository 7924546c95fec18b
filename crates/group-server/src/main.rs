//! `group-server`: run a Kafka consumer group coordinator node (see `--help`).

use std::process::ExitCode;

use group_server::{ConfigError, GroupServer, ServerConfig};

fn main() -> ExitCode {
    // args_os: an argument that is not UTF-8 is a usage error, not a panic.
    let config = match ServerConfig::from_args(std::env::args_os().skip(1)) {
        Ok(config) => config,
        Err(ConfigError::Help(text) | ConfigError::Version(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("group-server: {e}");
            return ExitCode::from(2);
        }
    };
    for warning in &config.warnings {
        eprintln!("group-server: warning: {warning}");
    }
    match GroupServer::start(&config) {
        Ok(server) => {
            // Tests and scripts wait for this line to learn the (possibly ephemeral) port.
            println!("group-server listening on {}", server.local_addr());
            if config.exit_on_stdin_close {
                std::thread::spawn(|| {
                    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                    std::process::exit(0);
                });
            }
            server.wait();
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("group-server: {e}");
            ExitCode::FAILURE
        }
    }
}
