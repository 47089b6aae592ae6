//! Authentication at the application fronts: one password for the default user, as Redis's
//! `requirepass`. The password comes from a file (its first line) or an environment variable,
//! never from a command-line value (a command line is visible to every local user in `ps`).
//! Attempts are compared in constant time. There are no other users (no ACL), and the password
//! crosses the network in plaintext like Redis's own AUTH: use a private network or a TLS tunnel.

use std::ffi::OsString;
use std::fmt;
use std::path::Path;

/// The environment variable `redis-nc` reads its password from (when `--requirepass-file` is
/// not given).
pub const REDIS_ENV: &str = "REDIS_NC_PASSWORD";
/// The environment variable `zk-nc` reads its password from (when `--password-file` is not
/// given).
pub const ZK_ENV: &str = "ZK_NC_PASSWORD";

/// A front's password: never empty; its `Debug` form does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(Vec<u8>);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Password({} bytes)", self.0.len())
    }
}

impl Password {
    /// A password (`None` when empty: an empty password would be no password).
    pub fn new(bytes: impl Into<Vec<u8>>) -> Option<Password> {
        let b = bytes.into();
        (!b.is_empty()).then_some(Password(b))
    }

    /// Is `attempt` this password? Constant time in the password: the time depends only on the
    /// length of the attempt (which the client chose).
    pub fn matches(&self, attempt: &[u8]) -> bool {
        ct_eq(&self.0, attempt)
    }

    /// Its bytes (for a client that sends it).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Its text, if it is UTF-8 (ZooKeeper-NC's JSON lines carry text).
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
}

/// `secret == attempt` without an early exit: every byte of `attempt` is compared (against the
/// secret repeated), so the time tells nothing about where they differ or about the secret's
/// length.
pub fn ct_eq(secret: &[u8], attempt: &[u8]) -> bool {
    if secret.is_empty() {
        return attempt.is_empty();
    }
    let mut diff = secret.len() ^ attempt.len();
    for (i, &b) in attempt.iter().enumerate() {
        diff |= usize::from(b ^ secret[i % secret.len()]);
    }
    std::hint::black_box(diff) == 0
}

/// The password in a password file's contents: its first line, without the line end (`\n` or
/// `\r\n`).
pub fn from_file_contents(contents: &[u8]) -> Option<Password> {
    let line = contents.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    Password::new(line)
}

/// A front's password: the first line of `file` when given, else the value of the environment
/// variable `env`, else none. An unreadable or empty file, or a variable that is set but empty,
/// is an error that names it (a front must not start open when a password was meant).
pub fn load(file: Option<&Path>, env: &str) -> Result<Option<Password>, String> {
    load_from(file, env, std::env::var_os(env))
}

/// [`load`] with the variable's value given.
pub fn load_from(
    file: Option<&Path>,
    env: &str,
    env_value: Option<OsString>,
) -> Result<Option<Password>, String> {
    if let Some(f) = file {
        let contents = std::fs::read(f)
            .map_err(|e| format!("password file {}: cannot read it: {e}", f.display()))?;
        let p = from_file_contents(&contents).ok_or_else(|| {
            format!(
                "password file {}: its first line is empty (the password is the first line)",
                f.display()
            )
        })?;
        warn_if_readable_by_others(f);
        return Ok(Some(p));
    }
    match env_value {
        None => Ok(None),
        Some(v) => {
            use std::os::unix::ffi::OsStringExt;
            Password::new(v.into_vec()).map(Some).ok_or_else(|| {
                format!("{env} is set but empty (unset it to run without a password)")
            })
        }
    }
}

fn warn_if_readable_by_others(f: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(f)
        && m.permissions().mode() & 0o077 != 0
    {
        eprintln!(
            "warning: password file {} is accessible to other users (mode {:o}); chmod 600 it",
            f.display(),
            m.permissions().mode() & 0o777
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ct_eq_is_equality() {
        assert!(ct_eq(b"secret", b"secret"));
        assert!(!ct_eq(b"secret", b"secreT"));
        assert!(!ct_eq(b"secret", b"secre"));
        assert!(!ct_eq(b"secret", b"secrets"));
        // The secret repeated is not the secret.
        assert!(!ct_eq(b"ab", b"abab"));
        assert!(!ct_eq(b"secret", b""));
        assert!(!ct_eq(b"", b"x"));
        assert!(ct_eq(b"", b""));
        for n in 0..300usize {
            let s: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            assert!(ct_eq(&s, &s.clone()));
            if n > 0 {
                let mut t = s.clone();
                t[n / 2] ^= 0x80;
                assert!(!ct_eq(&s, &t), "{n}");
            }
        }
    }

    #[test]
    fn the_first_line_of_the_file_without_its_end() {
        let p = |b: &[u8]| from_file_contents(b).map(|p| p.as_bytes().to_vec());
        assert_eq!(p(b"hunter2\n"), Some(b"hunter2".to_vec()));
        assert_eq!(p(b"hunter2"), Some(b"hunter2".to_vec()));
        assert_eq!(p(b"hunter2\r\n"), Some(b"hunter2".to_vec()));
        assert_eq!(p(b"hunter2\nsecond line\n"), Some(b"hunter2".to_vec()));
        assert_eq!(p(b" spaces kept \n"), Some(b" spaces kept ".to_vec()));
        assert_eq!(p(b""), None);
        assert_eq!(p(b"\n"), None);
        assert_eq!(p(b"\r\nx\n"), None);
    }

    #[test]
    fn load_prefers_the_file_and_refuses_empty_or_missing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pw");
        std::fs::write(&f, "from-file\n").unwrap();
        let env = Some(OsString::from("from-env"));
        assert_eq!(
            load_from(Some(&f), "X", env.clone()).unwrap(),
            Password::new("from-file")
        );
        assert_eq!(
            load_from(None, "X", env).unwrap(),
            Password::new("from-env")
        );
        assert_eq!(load_from(None, "X", None).unwrap(), None);
        let e = load_from(None, "X_PASSWORD", Some(OsString::new())).unwrap_err();
        assert!(e.contains("X_PASSWORD"), "{e}");
        let missing = dir.path().join("nope");
        let e = load_from(Some(&missing), "X", None).unwrap_err();
        assert!(e.contains(&missing.display().to_string()), "{e}");
        std::fs::write(&f, "\nsecond\n").unwrap();
        let e = load_from(Some(&f), "X", None).unwrap_err();
        assert!(
            e.contains(&f.display().to_string()) && e.contains("empty"),
            "{e}"
        );
    }

    #[test]
    fn debug_hides_the_password() {
        let p = Password::new("hunter2").unwrap();
        assert!(!format!("{p:?}").contains("hunter2"));
        assert_eq!(Password::new(""), None);
        assert_eq!(p.as_str(), Some("hunter2"));
        assert_eq!(Password::new(vec![0xff]).unwrap().as_str(), None);
    }
}
