//! The server's log: one timestamped line per event on stderr.

use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) fn log(message: &str) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let (secs, millis) = (now.as_secs(), now.subsec_millis());
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    eprintln!("{h:02}:{m:02}:{s:02}.{millis:03}Z group-server: {message}");
}
