//! One TCP connection: a reader thread that decodes and submits requests, and a writer
//! thread that sends the replies strictly in request order.
//!
//! A JoinGroup parked at its barrier holds only the writer; the reader keeps submitting
//! what follows (a Heartbeat on the same connection is registered at once and answered
//! after the JoinGroup, as Kafka clients expect: real-clients.md section 5.4).

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use crossbeam_channel::{Receiver, Sender, bounded};

use crate::log::log;
use crate::node::{Node, Reply, correlation_id};

/// How many replies may wait behind a parked one before the reader stops reading.
const PIPELINE_DEPTH: usize = 128;

enum Item {
    Reply(Reply),
    Close,
}

/// Reads length-prefixed frames; `Ok(None)` at a clean end of stream.
pub(crate) fn read_frame(stream: &mut impl Read, max_frame_bytes: usize) -> io::Result<Option<Bytes>> {
    let mut len = [0u8; 4];
    match stream.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = i32::from_be_bytes(len);
    let len = usize::try_from(len).ok().filter(|&l| l <= max_frame_bytes).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame length {len} out of range (max {max_frame_bytes})"),
        )
    })?;
    let mut frame = vec![0u8; len];
    stream.read_exact(&mut frame)?;
    Ok(Some(Bytes::from(frame)))
}

/// Serves one connection until it closes; returns when both threads are done.
pub(crate) fn serve(
    node: Arc<Node>,
    stream: TcpStream,
    peer: SocketAddr,
    max_frame_bytes: usize,
    verbose: bool,
) {
    let _ = stream.set_nodelay(true);
    let writer_stream = match stream.try_clone() {
        Ok(s) => s,
        Err(e) => {
            log(&format!("{peer}: cannot clone socket: {e}"));
            return;
        }
    };
    let (tx, rx) = bounded(PIPELINE_DEPTH);
    let writer =
        thread::Builder::new().name(format!("conn-w-{peer}")).spawn(move || write_loop(writer_stream, rx));
    let writer = match writer {
        Ok(w) => w,
        Err(e) => {
            log(&format!("{peer}: cannot start writer thread: {e}"));
            return;
        }
    };
    if verbose {
        log(&format!("{peer}: connected"));
    }
    read_loop(&node, stream, peer, max_frame_bytes, &tx);
    drop(tx);
    let _ = writer.join();
    if verbose {
        log(&format!("{peer}: closed"));
    }
}

fn read_loop(
    node: &Node,
    mut stream: TcpStream,
    peer: SocketAddr,
    max_frame_bytes: usize,
    tx: &Sender<Item>,
) {
    // Kafka reports client hosts as "/1.2.3.4".
    let client_host = format!("/{}", peer.ip());
    loop {
        let frame = match read_frame(&mut stream, max_frame_bytes) {
            Ok(Some(frame)) => frame,
            Ok(None) => return,
            Err(e) => {
                if e.kind() == io::ErrorKind::InvalidData {
                    log(&format!("{peer}: closing connection: {e}"));
                    let _ = tx.send(Item::Close);
                }
                return;
            }
        };
        let cid = correlation_id(&frame);
        match node.handle(frame, &client_host) {
            Ok(reply) => {
                if tx.send(Item::Reply(reply)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let cid = cid.map_or_else(|| "?".to_owned(), |c| c.to_string());
                log(&format!("{peer}: closing connection: malformed request (correlation id {cid}): {e}"));
                let _ = tx.send(Item::Close);
                return;
            }
        }
    }
}

fn write_loop(mut stream: TcpStream, rx: Receiver<Item>) {
    let peer = stream.peer_addr().map_or_else(|_| "?".to_owned(), |a| a.to_string());
    for item in rx {
        let body = match item {
            Item::Close => break,
            Item::Reply(Reply::Now(body)) => body,
            Item::Reply(Reply::NotBefore(at, body)) => {
                let now = Instant::now();
                if at > now {
                    thread::sleep(at - now);
                }
                body
            }
            Item::Reply(Reply::Later(wait)) => match wait() {
                Ok(body) => body,
                Err(e) => {
                    log(&format!("{peer}: closing connection: {e}"));
                    break;
                }
            },
            Item::Reply(Reply::Nothing) => continue,
        };
        if send(&mut stream, &body).is_err() {
            break;
        }
    }
    // Wakes the reader if it is still blocked in read.
    let _ = stream.shutdown(Shutdown::Both);
}

fn send(stream: &mut TcpStream, body: &BytesMut) -> io::Result<()> {
    let len = i32::try_from(body.len()).map_err(|_| io::Error::other("response too large"))?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(body);
    stream.write_all(&frame)
}
