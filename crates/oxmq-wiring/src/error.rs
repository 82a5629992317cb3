//! The wiring layer's errors: one enum, each variant with the errno the C front end reports
//! and a text the Python front end puts in its exception.

use std::fmt;

/// What went wrong in a wiring call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WiringError {
    /// No exchange or queue of that name is visible from this handle (`ENOENT`).
    UnknownName(String),
    /// The name is already owned: by this handle, this process, or another owner in the
    /// directory (`EADDRINUSE`).
    NameTaken(String),
    /// The name service did not answer within the request timeout (`EHOSTUNREACH`).
    Unreachable(String),
    /// A location that is not `interface:port`, `interface`, `:port` or empty, or that cannot
    /// be bound (`EINVAL`).
    BadLocation(String),
    /// An argument that makes no sense: bad scope, unknown exchange id, empty name, binding
    /// two ends neither of which lives in this handle (`EINVAL`).
    Invalid(String),
    /// A wait ran out of time (`EAGAIN`): a receive with a timeout, or a bind whose far end
    /// did not answer.
    Timeout,
    /// The handle was closed or interrupted (`ETERM`).
    Terminated,
    /// The name service answered something this client does not understand (`EPROTO`).
    Protocol(String),
    /// The directory behind the name service (etcd) failed (`EIO`).
    Backend(String),
    /// An error from the socket layer underneath.
    Socket(oxmq::Error),
}

/// Shorthand for the crate.
pub type Result<T> = std::result::Result<T, WiringError>;

impl WiringError {
    /// The errno the C front end sets for this error.
    pub fn errno(&self) -> i32 {
        match self {
            WiringError::UnknownName(_) => libc::ENOENT,
            WiringError::NameTaken(_) => libc::EADDRINUSE,
            WiringError::Unreachable(_) => libc::EHOSTUNREACH,
            WiringError::BadLocation(_) | WiringError::Invalid(_) => libc::EINVAL,
            WiringError::Timeout => libc::EAGAIN,
            WiringError::Terminated => oxmq::error::ETERM,
            WiringError::Protocol(_) => libc::EPROTO,
            WiringError::Backend(_) => libc::EIO,
            WiringError::Socket(e) => e.errno(),
        }
    }
}

impl fmt::Display for WiringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WiringError::UnknownName(n) => write!(f, "no exchange or queue named '{n}'"),
            WiringError::NameTaken(n) => write!(f, "the name '{n}' is already taken"),
            WiringError::Unreachable(h) => write!(f, "name service at {h} is unreachable"),
            WiringError::BadLocation(l) => write!(f, "bad location '{l}'"),
            WiringError::Invalid(t) => write!(f, "invalid argument: {t}"),
            WiringError::Timeout => write!(f, "timed out"),
            WiringError::Terminated => write!(f, "the wiring handle was closed"),
            WiringError::Protocol(t) => write!(f, "name service protocol error: {t}"),
            WiringError::Backend(t) => write!(f, "name service directory error: {t}"),
            WiringError::Socket(e) => write!(f, "{}", oxmq::error::strerror(e.errno())),
        }
    }
}

impl std::error::Error for WiringError {}

impl From<oxmq::Error> for WiringError {
    fn from(e: oxmq::Error) -> Self {
        match e {
            oxmq::Error::Term => WiringError::Terminated,
            e => WiringError::Socket(e),
        }
    }
}
