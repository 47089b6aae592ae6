//! Fronts out of file descriptors, shared by the RESP front and the ZooKeeper-NC writer front.
//!
//! At the open-files limit `accept` fails while connections wait in the backlog: a
//! level-triggered listener then stays readable (an event loop spins) and the client waits
//! unanswered. A front keeps one descriptor spare ([`Spare`]): closed, it makes room to accept
//! one waiting connection, tell it why it cannot be served ([`tell_and_close`]) and close it;
//! then it is taken back. Refusals are counted and warned about at most every
//! [`WARN_EVERY`].

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// At most one warning about refused connections per this.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// Whether `e` says the process (or the system) is out of descriptors or socket memory, which
/// accepting again later can cure.
pub fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// One spare descriptor and the count of connections refused for want of descriptors.
pub struct Spare {
    /// Who warns (`"redis-nc"`, `"zk-nc writer front"`).
    who: &'static str,
    file: Option<File>,
    refused: u64,
    said: Option<(Instant, u64)>,
    other_said: Option<Instant>,
}

impl Spare {
    /// Take the spare descriptor now, while there are descriptors.
    pub fn new(who: &'static str) -> Self {
        Spare {
            who,
            file: File::open("/dev/null").ok(),
            refused: 0,
            said: None,
            other_said: None,
        }
    }

    /// Out of descriptors: give the spare back, accept one waiting connection (the listener
    /// should be non-blocking) and take the spare again. The connection, if one was waiting;
    /// and whether the spare is held again (if not, the caller rests the listener instead of
    /// spinning on it).
    pub fn accept_one(&mut self, listener: &TcpListener) -> (Option<TcpStream>, bool) {
        let Some(f) = self.file.take() else {
            self.file = File::open("/dev/null").ok();
            return (None, self.file.is_some());
        };
        drop(f);
        let took = listener.accept().ok().map(|(s, _)| s);
        self.file = File::open("/dev/null").ok();
        (took, self.file.is_some())
    }

    /// Take the spare again if it is not held: an [`accept_one`](Self::accept_one) at the very
    /// limit gives it up to tell a connection why, and cannot take it back until that
    /// connection's descriptor is closed. Cheap when it is held; call it once per turn of the
    /// accept loop.
    pub fn keep(&mut self) {
        if self.file.is_none() {
            self.file = File::open("/dev/null").ok();
        }
    }

    /// Whether the spare descriptor is held.
    pub fn held(&self) -> bool {
        self.file.is_some()
    }

    /// Count one refused connection (`e`: why); warn at the first and then at most every
    /// [`WARN_EVERY`], with the count since the last warning.
    pub fn refused(&mut self, e: &io::Error) {
        self.refused += 1;
        let due = self.said.is_none_or(|(t, _)| t.elapsed() >= WARN_EVERY);
        if due {
            let since = self.refused - self.said.map_or(0, |(_, n)| n);
            tracing::warn!(
                "{}: {e}: {since} connection(s) refused (raise the open-files limit, ulimit -n)",
                self.who
            );
            self.said = Some((Instant::now(), self.refused));
        }
    }

    /// An accept error that is not for want of descriptors (a connection reset before it was
    /// taken, …): warned about at most every [`WARN_EVERY`], so that a listener failing again
    /// and again does not flood the log.
    pub fn other_error(&mut self, e: &io::Error) {
        if self.other_said.is_none_or(|t| t.elapsed() >= WARN_EVERY) {
            tracing::warn!("{}: {e}", self.who);
            self.other_said = Some(Instant::now());
        }
    }

    /// Connections refused so far.
    pub fn count(&self) -> u64 {
        self.refused
    }
}

/// Tell a connection why it cannot be served (`msg`), and close it. What the client already
/// sent is read first: closing with unread bytes would reset the connection, and the client
/// could lose the reply.
pub fn tell_and_close(mut stream: TcpStream, msg: &[u8]) {
    let _ = stream.set_nonblocking(true);
    let _ = stream.write(msg);
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_counted_and_the_spare_taken_back() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let mut spare = Spare::new("test");
        // Nobody waiting: nothing taken, the spare is held again.
        let (s, held) = spare.accept_one(&l);
        assert!(s.is_none());
        assert!(held);
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        c.write_all(b"PING\r\n").unwrap();
        let mut got = None;
        for _ in 0..200 {
            let (s, held) = spare.accept_one(&l);
            assert!(held);
            if s.is_some() {
                got = s;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let s = got.expect("the waiting connection is taken");
        spare.refused(&io::Error::from_raw_os_error(libc::EMFILE));
        assert_eq!(spare.count(), 1);
        tell_and_close(s, b"-ERR max number of clients reached\r\n");
        let mut all = vec![];
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"-ERR max number of clients reached\r\n");
    }

    #[test]
    fn other_accept_errors_are_warned_about_at_most_every_warn_every() {
        let mut spare = Spare::new("test");
        let e = io::Error::from_raw_os_error(libc::ECONNABORTED);
        spare.other_error(&e);
        let first = spare.other_said.expect("the first is warned about");
        spare.other_error(&e);
        assert_eq!(spare.other_said, Some(first), "the second, at once, is not");
        spare.other_said = Some(first - WARN_EVERY);
        spare.other_error(&e);
        assert!(
            spare.other_said.unwrap() > first,
            "one WARN_EVERY later it is"
        );
        assert_eq!(spare.count(), 0, "not counted as refused connections");
    }

    #[test]
    fn a_spare_given_up_is_taken_again_by_keep() {
        let mut spare = Spare::new("test");
        assert!(spare.held());
        spare.file = None;
        assert!(!spare.held());
        spare.keep();
        assert!(spare.held());
    }

    #[test]
    fn out_of_descriptors_is_emfile_enfile_enobufs_enomem() {
        for e in [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM] {
            assert!(out_of_descriptors(&io::Error::from_raw_os_error(e)));
        }
        assert!(!out_of_descriptors(&io::Error::from_raw_os_error(
            libc::ECONNABORTED
        )));
    }
}
