//! A canned HTTP server for tests: answers fixed bodies by method and path (query ignored)
//! and records every request line, so verbs can run end to end against RM (and NM) answers
//! shaped like a real YARN's.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A running fake server.
pub(crate) struct FakeRm {
    pub(crate) url: String,
    pub(crate) requests: Arc<Mutex<Vec<String>>>,
}

impl FakeRm {
    /// Serves `routes`: `("GET /ws/v1/cluster/apps", (200, "{...}"))`; anything else is a 404
    /// with an HTML body, as Jersey answers an unknown path. `{url}` in a body becomes the
    /// server's own `host:port`, so an RM answer can point at this server as an NM.
    pub(crate) fn start(routes: &[(&str, (u16, &str))]) -> FakeRm {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let routes: HashMap<String, (u16, String)> = routes
            .iter()
            .map(|(k, (s, b))| (k.to_string(), (*s, b.replace("{url}", &addr))))
            .collect();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        #[allow(clippy::disallowed_methods)] // a test server beside the code under test
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let mut length = 0usize;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let mut parts = line.split_whitespace();
                let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                log.lock().expect("lock").push(format!("{method} {target}"));
                let path = target.split('?').next().unwrap_or("");
                let (status, text) = routes
                    .get(&format!("{method} {path}"))
                    .cloned()
                    .unwrap_or((404, "<html>Not Found</html>".to_string()));
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        FakeRm {
            url: format!("http://{addr}"),
            requests,
        }
    }

    pub(crate) fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}
