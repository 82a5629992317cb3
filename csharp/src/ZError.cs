// ZeroMQ's error numbers (Linux errno values, and libzmq's own above ZMQ_HAUSNUMERO) as objects
// that compare by number, and the exceptions the binding throws for them.

using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace ZeroMQ
{
    /// <summary>
    /// A ZeroMQ error number with its symbolic name and libzmq's text. Well-known errors are
    /// shared instances (<see cref="EAGAIN"/>, <see cref="ETERM"/>, ...), so
    /// <c>error == ZError.EAGAIN</c> works, and looking one up allocates nothing.
    /// </summary>
    public sealed class ZError : IEquatable<ZError>
    {
        const int Hausnumero = 156384712;
        static readonly Dictionary<int, ZError> known = new Dictionary<int, ZError>();

        /// <summary>No error (the <c>out ZError</c> value of a call that succeeded).</summary>
        public static readonly ZError None = Add(0, "None");
        /// <summary>ENOENT: no such file or directory (e.g. an ipc path).</summary>
        public static readonly ZError ENOENT = Add(2, "ENOENT");
        /// <summary>EINTR: the call was interrupted by a signal.</summary>
        public static readonly ZError EINTR = Add(4, "EINTR");
        /// <summary>EAGAIN: nothing to receive, or no room to send, in non-blocking mode or within the timeout.</summary>
        public static readonly ZError EAGAIN = Add(11, "EAGAIN");
        /// <summary>ENOMEM: out of memory.</summary>
        public static readonly ZError ENOMEM = Add(12, "ENOMEM");
        /// <summary>EFAULT: an invalid pointer or handle.</summary>
        public static readonly ZError EFAULT = Add(14, "EFAULT");
        /// <summary>EINVAL: an invalid argument (option, value, endpoint).</summary>
        public static readonly ZError EINVAL = Add(22, "EINVAL");
        /// <summary>EMFILE: too many open files or sockets.</summary>
        public static readonly ZError EMFILE = Add(24, "EMFILE");
        /// <summary>ENOTSOCK: not a valid socket.</summary>
        public static readonly ZError ENOTSOCK = Add(88, "ENOTSOCK");
        /// <summary>EMSGSIZE: message too large.</summary>
        public static readonly ZError EMSGSIZE = Add(90, "EMSGSIZE");
        /// <summary>EPROTONOSUPPORT: the endpoint's transport is not supported.</summary>
        public static readonly ZError EPROTONOSUPPORT = Add(93, "EPROTONOSUPPORT");
        /// <summary>ENOTSUP: operation not supported by this socket type or library.</summary>
        public static readonly ZError ENOTSUP = Add(95, "ENOTSUP");
        /// <summary>EAFNOSUPPORT: address family not supported.</summary>
        public static readonly ZError EAFNOSUPPORT = Add(97, "EAFNOSUPPORT");
        /// <summary>EADDRINUSE: the address is already in use.</summary>
        public static readonly ZError EADDRINUSE = Add(98, "EADDRINUSE");
        /// <summary>EADDRNOTAVAIL: the address is not available.</summary>
        public static readonly ZError EADDRNOTAVAIL = Add(99, "EADDRNOTAVAIL");
        /// <summary>ENETDOWN: the network is down.</summary>
        public static readonly ZError ENETDOWN = Add(100, "ENETDOWN");
        /// <summary>ENETUNREACH: the network is unreachable.</summary>
        public static readonly ZError ENETUNREACH = Add(101, "ENETUNREACH");
        /// <summary>ECONNABORTED: connection aborted.</summary>
        public static readonly ZError ECONNABORTED = Add(103, "ECONNABORTED");
        /// <summary>ECONNRESET: connection reset by peer.</summary>
        public static readonly ZError ECONNRESET = Add(104, "ECONNRESET");
        /// <summary>ENOBUFS: no buffer space available.</summary>
        public static readonly ZError ENOBUFS = Add(105, "ENOBUFS");
        /// <summary>ENOTCONN: not connected.</summary>
        public static readonly ZError ENOTCONN = Add(107, "ENOTCONN");
        /// <summary>ETIMEDOUT: connection timed out.</summary>
        public static readonly ZError ETIMEDOUT = Add(110, "ETIMEDOUT");
        /// <summary>ECONNREFUSED: connection refused.</summary>
        public static readonly ZError ECONNREFUSED = Add(111, "ECONNREFUSED");
        /// <summary>EHOSTUNREACH: no route to host (e.g. ROUTER_MANDATORY with an unknown peer).</summary>
        public static readonly ZError EHOSTUNREACH = Add(113, "EHOSTUNREACH");
        /// <summary>EINPROGRESS: operation in progress.</summary>
        public static readonly ZError EINPROGRESS = Add(115, "EINPROGRESS");
        /// <summary>EFSM: the operation is not valid in the socket's current state (e.g. REQ sending twice).</summary>
        public static readonly ZError EFSM = Add(Hausnumero + 51, "EFSM");
        /// <summary>ENOCOMPATPROTO: the transport is not compatible with the socket type.</summary>
        public static readonly ZError ENOCOMPATPROTO = Add(Hausnumero + 52, "ENOCOMPATPROTO");
        /// <summary>ETERM: the socket's context was shut down or terminated.</summary>
        public static readonly ZError ETERM = Add(Hausnumero + 53, "ETERM");
        /// <summary>EMTHREAD: no I/O thread available.</summary>
        public static readonly ZError EMTHREAD = Add(Hausnumero + 54, "EMTHREAD");

        /// <summary>The errno value.</summary>
        public int Number { get; private set; }
        /// <summary>The symbolic name, e.g. "EAGAIN" ("E" and the number when unknown).</summary>
        public string Name { get; private set; }
        /// <summary>libzmq's description of the error (<c>zmq_strerror</c>).</summary>
        public string Text
        {
            get
            {
                if (Number == 0) return "Success";
                LibraryLoader.Ensure();
                return StrError(Number);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static string StrError(int number) { return Marshal.PtrToStringAnsi(Native.zmq_strerror(number)); }

        ZError(int number, string name) { Number = number; Name = name; }

        static ZError Add(int number, string name)
        {
            var e = new ZError(number, name);
            known[number] = e;
            return e;
        }

        /// <summary>The error for an errno value: a shared instance when the value is known.</summary>
        public static ZError FromErrno(int errno)
        {
            ZError e;
            lock (known)
            {
                if (!known.TryGetValue(errno, out e))
                    e = new ZError(errno, "E" + errno);
            }
            return e;
        }

        /// <summary>The error of the last failed native call on this thread.</summary>
        public static ZError GetLastErr() { return FromErrno(Native.LastErrno()); }

        /// <inheritdoc/>
        public bool Equals(ZError other) { return !ReferenceEquals(other, null) && other.Number == Number; }
        /// <inheritdoc/>
        public override bool Equals(object obj) { return Equals(obj as ZError); }
        /// <inheritdoc/>
        public override int GetHashCode() { return Number; }
        /// <summary>Equality by number.</summary>
        public static bool operator ==(ZError a, ZError b)
        {
            return ReferenceEquals(a, null) ? ReferenceEquals(b, null) : a.Equals(b);
        }
        /// <summary>Inequality by number.</summary>
        public static bool operator !=(ZError a, ZError b) { return !(a == b); }
        /// <summary>"NAME (number): text".</summary>
        public override string ToString() { return Name + "(" + Number + "): " + Text; }
    }

    /// <summary>A ZeroMQ call failed; <see cref="Error"/> says why.</summary>
    public class ZException : Exception
    {
        /// <summary>The error that ZeroMQ reported.</summary>
        public ZError Error { get; private set; }
        /// <summary>The errno value of <see cref="Error"/>.</summary>
        public int ErrNo { get { return Error.Number; } }

        /// <summary>An exception for <paramref name="error"/>.</summary>
        public ZException(ZError error) : this(error, null) { }

        /// <summary>An exception for <paramref name="error"/>, naming the operation that failed.</summary>
        public ZException(ZError error, string operation)
            : base((operation == null ? "" : operation + ": ") + error.Name + " (" + error.Text + ")")
        {
            Error = error;
        }

        /// <summary>The exception for <paramref name="error"/>: <see cref="ZTerminatedException"/> for
        /// ETERM, <see cref="ZTimeoutException"/> for EAGAIN, <see cref="ZException"/> otherwise.</summary>
        public static ZException For(ZError error, string operation)
        {
            if (error == ZError.ETERM) return new ZTerminatedException(operation);
            if (error == ZError.EAGAIN) return new ZTimeoutException(operation);
            return new ZException(error, operation);
        }
    }

    /// <summary>
    /// The socket's context was shut down (<see cref="ZContext.Shutdown"/> or
    /// <see cref="ZContext.Dispose"/>) while the call was blocked or before it began (ETERM).
    /// The socket can only be disposed now.
    /// </summary>
    public sealed class ZTerminatedException : ZException
    {
        /// <summary>ETERM in <paramref name="operation"/>.</summary>
        public ZTerminatedException(string operation) : base(ZError.ETERM, operation) { }
    }

    /// <summary>
    /// A blocking send or receive gave up after the socket's timeout
    /// (<see cref="ZSocket.SendTimeout"/>, <see cref="ZSocket.ReceiveTimeout"/>) (EAGAIN).
    /// Non-blocking calls report EAGAIN by their return value instead.
    /// </summary>
    public sealed class ZTimeoutException : ZException
    {
        /// <summary>EAGAIN in <paramref name="operation"/>.</summary>
        public ZTimeoutException(string operation) : base(ZError.EAGAIN, operation) { }
    }
}
