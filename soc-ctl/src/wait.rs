//! Waiting for input without sleep loops: block in `ppoll(2)` until one of the sockets is
//! readable or a deadline passes (nanosecond timeout, no timer-slack-sized sleeps).

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::time::TimeSpec;

/// Block until one of `socks` is readable or `timeout` has passed. Which ones are readable
/// (a bit per socket, in order); 0 on a timeout or a signal.
pub fn readable<S: AsFd>(socks: &[&S], timeout: Duration) -> io::Result<u64> {
    let mut fds: Vec<PollFd> = socks
        .iter()
        .map(|s| PollFd::new(s.as_fd(), PollFlags::POLLIN))
        .collect();
    let ts = TimeSpec::from_duration(timeout);
    match ppoll(&mut fds, Some(ts), None) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(fds.iter().enumerate().fold(0, |m, (i, f)| {
        let r = f
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLIN | PollFlags::POLLERR));
        m | (r as u64) << i
    }))
}
