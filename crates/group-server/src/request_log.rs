//! An optional JSON-lines log of served requests, for end-to-end tests and debugging.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// One line per request: `{"ts":<ms>,"api":"JoinGroup","version":7,"client_id":"...",...}`.
#[derive(Debug)]
pub(crate) struct RequestLog {
    file: Mutex<File>,
}

impl RequestLog {
    pub(crate) fn create(path: &Path) -> std::io::Result<RequestLog> {
        Ok(RequestLog { file: Mutex::new(File::options().create(true).append(true).open(path)?) })
    }

    pub(crate) fn write(&self, fields: &str) {
        let ts = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let line = format!("{{\"ts\":{ts},{fields}}}\n");
        if let Ok(mut file) = self.file.lock() {
            // A lost log line must not take a request down with it.
            let _ = file.write_all(line.as_bytes());
        }
    }
}
