//! The error type of every oxmq call.
//!
//! Each variant is one errno value that libzmq can return, so the C ABI maps an `Error` to
//! `errno` with a table lookup and nothing is lost in translation. Operating-system errors that
//! have no variant of their own keep their raw errno in [`Error::Os`].

use std::fmt;
use std::io;

/// Base of the errno values libzmq defines itself (`ZMQ_HAUSNUMERO` in `zmq.h`).
pub const HAUSNUMERO: i32 = 156_384_712;
/// `EFSM`: the operation is not valid in the socket's current state (REQ sending twice).
pub const EFSM: i32 = HAUSNUMERO + 51;
/// `ENOCOMPATPROTO`: the transport does not fit the socket type.
pub const ENOCOMPATPROTO: i32 = HAUSNUMERO + 52;
/// `ETERM`: the context was terminated.
pub const ETERM: i32 = HAUSNUMERO + 53;
/// `EMTHREAD`: no I/O thread is available.
pub const EMTHREAD: i32 = HAUSNUMERO + 54;

/// What went wrong, as libzmq would report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// `EAGAIN`: non-blocking mode was requested and the call would block, or a timeout expired.
    Again,
    /// `EINVAL`: an argument is invalid (option value, endpoint syntax, flags).
    Invalid,
    /// `EFAULT`: a null or dangling handle (C ABI).
    Fault,
    /// `EFSM`: the call is not allowed in the socket's current state.
    Fsm,
    /// `ETERM`: the context this socket belongs to was terminated.
    Term,
    /// `ENOTSOCK`: the handle is not (or no longer) a socket.
    NotSock,
    /// `EHOSTUNREACH`: ROUTER_MANDATORY and no peer has that routing id.
    HostUnreach,
    /// `ENOTSUP`: the operation is not supported by this socket type.
    NotSup,
    /// `EPROTONOSUPPORT`: unknown transport.
    ProtoNoSupport,
    /// `ENOCOMPATPROTO`: transport not compatible with the socket type.
    NoCompatProto,
    /// `EADDRINUSE`: the address is already bound.
    AddrInUse,
    /// `EADDRNOTAVAIL`: the address is not local.
    AddrNotAvail,
    /// `ENODEV`: the named interface does not exist.
    NoDev,
    /// `ENOENT`: nothing is bound/connected at that endpoint (unbind/disconnect).
    NoEnt,
    /// `EMFILE`: the socket limit (MAX_SOCKETS) or file-descriptor limit was reached.
    MFile,
    /// `EINTR`: a blocking call was interrupted by a signal.
    Intr,
    /// `EMSGSIZE`: the message is larger than the transport or MAXMSGSIZE allows.
    MsgSize,
    /// `ENOMEM`: out of memory.
    NoMem,
    /// `EMTHREAD`: no I/O thread available.
    MThread,
    /// `ECONNREFUSED`.
    ConnRefused,
    /// `ENAMETOOLONG`: an ipc path longer than the kernel accepts.
    NameTooLong,
    /// Any other operating-system errno.
    Os(i32),
}

/// Shorthand used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The errno value libzmq would set for this error.
    pub fn errno(self) -> i32 {
        match self {
            Error::Again => libc::EAGAIN,
            Error::Invalid => libc::EINVAL,
            Error::Fault => libc::EFAULT,
            Error::Fsm => EFSM,
            Error::Term => ETERM,
            Error::NotSock => libc::ENOTSOCK,
            Error::HostUnreach => libc::EHOSTUNREACH,
            Error::NotSup => libc::ENOTSUP,
            Error::ProtoNoSupport => libc::EPROTONOSUPPORT,
            Error::NoCompatProto => ENOCOMPATPROTO,
            Error::AddrInUse => libc::EADDRINUSE,
            Error::AddrNotAvail => libc::EADDRNOTAVAIL,
            Error::NoDev => libc::ENODEV,
            Error::NoEnt => libc::ENOENT,
            Error::MFile => libc::EMFILE,
            Error::Intr => libc::EINTR,
            Error::MsgSize => libc::EMSGSIZE,
            Error::NoMem => libc::ENOMEM,
            Error::MThread => EMTHREAD,
            Error::ConnRefused => libc::ECONNREFUSED,
            Error::NameTooLong => libc::ENAMETOOLONG,
            Error::Os(e) => e,
        }
    }

    /// The inverse of [`Error::errno`]: every errno maps back to the variant it came from.
    pub fn from_errno(errno: i32) -> Error {
        match errno {
            libc::EAGAIN => Error::Again,
            libc::EINVAL => Error::Invalid,
            libc::EFAULT => Error::Fault,
            EFSM => Error::Fsm,
            ETERM => Error::Term,
            libc::ENOTSOCK => Error::NotSock,
            libc::EHOSTUNREACH => Error::HostUnreach,
            libc::ENOTSUP => Error::NotSup,
            libc::EPROTONOSUPPORT => Error::ProtoNoSupport,
            ENOCOMPATPROTO => Error::NoCompatProto,
            libc::EADDRINUSE => Error::AddrInUse,
            libc::EADDRNOTAVAIL => Error::AddrNotAvail,
            libc::ENODEV => Error::NoDev,
            libc::ENOENT => Error::NoEnt,
            libc::EMFILE => Error::MFile,
            libc::EINTR => Error::Intr,
            libc::EMSGSIZE => Error::MsgSize,
            libc::ENOMEM => Error::NoMem,
            EMTHREAD => Error::MThread,
            libc::ECONNREFUSED => Error::ConnRefused,
            libc::ENAMETOOLONG => Error::NameTooLong,
            e => Error::Os(e),
        }
    }
}

/// libzmq's `zmq_strerror` text for its own errno values; the OS text for the rest.
pub fn strerror(errno: i32) -> String {
    match errno {
        EFSM => "Operation cannot be accomplished in current state".into(),
        ENOCOMPATPROTO => "The protocol is not compatible with the socket type".into(),
        ETERM => "Context was terminated".into(),
        EMTHREAD => "No thread available".into(),
        e => {
            let s = io::Error::from_raw_os_error(e).to_string();
            // std appends " (os error N)"; libzmq prints the bare strerror text.
            match s.rfind(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&strerror(self.errno()))
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        match e.raw_os_error() {
            Some(n) => Error::from_errno(n),
            None => match e.kind() {
                io::ErrorKind::WouldBlock => Error::Again,
                io::ErrorKind::InvalidInput => Error::Invalid,
                io::ErrorKind::AddrInUse => Error::AddrInUse,
                io::ErrorKind::AddrNotAvailable => Error::AddrNotAvail,
                io::ErrorKind::NotFound => Error::NoEnt,
                io::ErrorKind::OutOfMemory => Error::NoMem,
                io::ErrorKind::Interrupted => Error::Intr,
                _ => Error::Os(libc::EIO),
            },
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        io::Error::from_raw_os_error(e.errno())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_round_trips() {
        for e in [
            Error::Again,
            Error::Invalid,
            Error::Fault,
            Error::Fsm,
            Error::Term,
            Error::NotSock,
            Error::HostUnreach,
            Error::NotSup,
            Error::ProtoNoSupport,
            Error::NoCompatProto,
            Error::AddrInUse,
            Error::AddrNotAvail,
            Error::NoDev,
            Error::NoEnt,
            Error::MFile,
            Error::Intr,
            Error::MsgSize,
            Error::NoMem,
            Error::MThread,
            Error::ConnRefused,
            Error::NameTooLong,
            Error::Os(libc::EPIPE),
        ] {
            assert_eq!(Error::from_errno(e.errno()), e, "{e:?}");
        }
    }

    #[test]
    fn zmq_specific_values_match_libzmq() {
        assert_eq!(EFSM, 156_384_763);
        assert_eq!(ETERM, 156_384_765);
        assert_eq!(Error::Term.to_string(), "Context was terminated");
        assert_eq!(Error::Again.to_string(), "Resource temporarily unavailable");
    }
}
