//! `group-server users add|remove|list`: writes and reads the SASL users file (the
//! format is described in `sasl::users`). Passwords come from standard input, never
//! from the command line, where other users of the machine could see them.

use std::ffi::OsString;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::SaslMechanism;
use crate::sasl::{DEFAULT_MECHANISMS, DEFAULT_USER_ITERATIONS, Users, UsersError};

/// The `users` command line.
#[derive(Debug, Parser)]
#[command(
    name = "group-server users",
    about = "Manage the SASL users file of --sasl-users (salted SCRAM credentials, never passwords)",
    after_help = "Example:\n  echo 'alice-secret' | group-server users add --file users.txt --user alice"
)]
struct UsersArgs {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Add a user, or replace its credentials; the password is read as one line from
    /// standard input.
    Add {
        /// The users file (created if missing).
        #[arg(long, value_name = "PATH")]
        file: PathBuf,
        /// The user name (the principal is User:NAME).
        #[arg(long, value_name = "NAME")]
        user: String,
        /// The SCRAM credentials to store, comma-separated; PLAIN logins are checked
        /// against them.
        #[arg(long, value_name = "LIST", default_value = "SCRAM-SHA-512,SCRAM-SHA-256")]
        mechanism: String,
        /// PBKDF2 iterations (at least 4096).
        #[arg(long, value_name = "N", default_value_t = DEFAULT_USER_ITERATIONS)]
        iterations: u32,
    },
    /// Remove a user.
    Remove {
        /// The users file.
        #[arg(long, value_name = "PATH")]
        file: PathBuf,
        /// The user name.
        #[arg(long, value_name = "NAME")]
        user: String,
    },
    /// List the users and their mechanisms.
    List {
        /// The users file.
        #[arg(long, value_name = "PATH")]
        file: PathBuf,
    },
}

/// Runs `group-server users ARGS...` (`args` without `group-server users`), reading a
/// password from `stdin` for `add`; returns what to print on standard output.
/// `--help` comes back as [`UsersError::Help`].
///
/// ```
/// let dir = std::env::temp_dir().join(format!("users-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = dir.join("users.txt");
/// let file = file.to_str().expect("UTF-8 path");
/// let mut password = "s3cret\n".as_bytes();
/// group_server::users_command(["add", "--file", file, "--user", "alice"], &mut password)?;
/// let listed = group_server::users_command(["list", "--file", file], &mut "".as_bytes())?;
/// assert_eq!(listed, "alice SCRAM-SHA-512,SCRAM-SHA-256\n");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn users_command<I, S>(args: I, stdin: &mut dyn BufRead) -> Result<String, UsersError>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let argv = std::iter::once(OsString::from("users")).chain(args.into_iter().map(Into::into));
    let parsed = UsersArgs::try_parse_from(argv).map_err(|e| match e.kind() {
        clap::error::ErrorKind::DisplayHelp
        | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            UsersError::Help(e.render().to_string())
        }
        _ => UsersError::Usage(e.render().to_string().trim_end().to_owned()),
    })?;
    match parsed.command {
        Command::Add { file, user, mechanism, iterations } => {
            let mechanisms = mechanisms(&mechanism)?;
            let password = read_password(stdin)?;
            let mut users = load_or_new(&file)?;
            users.add(&user, &password, &mechanisms, iterations)?;
            users.save(&file)?;
            let names: Vec<&str> = mechanisms.iter().map(|m| m.name()).collect();
            Ok(format!("added user {user} ({}) to {}\n", names.join(", "), file.display()))
        }
        Command::Remove { file, user } => {
            let mut users = Users::load(&file)?;
            if !users.remove(&user) {
                return Err(UsersError::Usage(format!("no user {user:?} in {}", file.display())));
            }
            users.save(&file)?;
            Ok(format!("removed user {user} from {}\n", file.display()))
        }
        Command::List { file } => {
            let users = Users::load(&file)?;
            let mut out = String::new();
            for (name, mechanisms) in users.list() {
                let names: Vec<&str> = mechanisms.iter().map(|m| m.name()).collect();
                out.push_str(&format!("{name} {}\n", names.join(",")));
            }
            Ok(out)
        }
    }
}

fn mechanisms(list: &str) -> Result<Vec<SaslMechanism>, UsersError> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let mechanism: SaslMechanism =
            name.parse().map_err(|()| UsersError::BadMechanism(name.to_owned()))?;
        if mechanism == SaslMechanism::Plain {
            return Err(UsersError::BadMechanism(name.to_owned()));
        }
        if !out.contains(&mechanism) {
            out.push(mechanism);
        }
    }
    if out.is_empty() {
        return Ok(DEFAULT_MECHANISMS.to_vec());
    }
    Ok(out)
}

/// One line, without its line ending.
fn read_password(stdin: &mut dyn BufRead) -> Result<String, UsersError> {
    let mut line = String::new();
    stdin.read_line(&mut line).map_err(|_| UsersError::NoPassword)?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    if password.is_empty() {
        return Err(UsersError::NoPassword);
    }
    Ok(password.to_owned())
}

fn load_or_new(file: &Path) -> Result<Users, UsersError> {
    if file.exists() { Users::load(file) } else { Ok(Users::default()) }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    struct Dir(PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("group-server-users-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Dir(dir)
    }

    fn run(args: &[&str], stdin: &str) -> Result<String, UsersError> {
        users_command(args.iter().copied(), &mut stdin.as_bytes())
    }

    #[test]
    fn add_list_remove() {
        let dir = dir("cycle");
        let file = dir.0.join("users.txt");
        let f = file.to_str().expect("utf-8");
        let out = run(&["add", "--file", f, "--user", "alice"], "pw one\n").expect("add");
        assert!(out.starts_with("added user alice (SCRAM-SHA-512, SCRAM-SHA-256)"), "{out}");
        run(
            &["add", "--file", f, "--user", "bob", "--mechanism", "SCRAM-SHA-256", "--iterations", "4096"],
            "x\r\n",
        )
        .expect("add bob");
        assert_eq!(
            run(&["list", "--file", f], "").expect("list"),
            "alice SCRAM-SHA-512,SCRAM-SHA-256\nbob SCRAM-SHA-256\n"
        );
        let users = Users::load(&file).expect("loads");
        assert!(users.verify_plain("alice", "pw one") && users.verify_plain("bob", "x"));
        let text = std::fs::read_to_string(&file).expect("read");
        assert!(!text.contains("pw one"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).expect("meta").permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        run(&["remove", "--file", f, "--user", "alice"], "").expect("remove");
        assert_eq!(run(&["list", "--file", f], "").expect("list"), "bob SCRAM-SHA-256\n");
        assert!(matches!(run(&["remove", "--file", f, "--user", "alice"], ""), Err(UsersError::Usage(_))));
    }

    #[rstest]
    #[case::no_password(&["add", "--file", "F", "--user", "a"], "", "no password")]
    #[case::empty_line(&["add", "--file", "F", "--user", "a"], "\n", "no password")]
    #[case::plain(&["add", "--file", "F", "--user", "a", "--mechanism", "PLAIN"], "pw\n", "bad mechanism \"PLAIN\"")]
    #[case::unknown(&["add", "--file", "F", "--user", "a", "--mechanism", "MD5"], "pw\n", "bad mechanism \"MD5\"")]
    #[case::iterations(&["add", "--file", "F", "--user", "a", "--iterations", "10"], "pw\n", "10 iterations is too few")]
    #[case::bad_name(&["add", "--file", "F", "--user", "a b"], "pw\n", "bad user name")]
    #[case::no_user(&["add", "--file", "F"], "pw\n", "--user")]
    #[case::missing_file(&["list", "--file", "F/none"], "", "cannot read the users file")]
    fn bad_commands_say_why(#[case] args: &[&str], #[case] stdin: &str, #[case] expected: &str) {
        let dir = dir("bad");
        let file = dir.0.join("users.txt");
        let args: Vec<String> = args.iter().map(|a| a.replace('F', file.to_str().expect("utf-8"))).collect();
        let err = users_command(args.iter().map(String::as_str), &mut stdin.as_bytes()).expect_err("fails");
        assert!(err.to_string().contains(expected), "{err}");
        assert!(!file.exists() || expected == "cannot read the users file");
    }

    #[test]
    fn help_is_not_an_error() {
        assert!(matches!(run(&["--help"], ""), Err(UsersError::Help(text)) if text.contains("add")));
    }
}
