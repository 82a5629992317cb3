// SafeHandles for native contexts and sockets. They give deterministic release on
// Dispose, a reference count that keeps a handle alive across a native call running on another
// thread, and a finalizer that only frees what is safe to free from the finalizer thread.

using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace ZeroMQ
{
    /// <summary>
    /// A native context. Each socket holds a reference on it (DangerousAddRef), so
    /// <c>zmq_ctx_term</c> runs only after the last socket of the context is closed and never
    /// waits for a socket someone still holds.
    /// </summary>
    internal sealed class ContextHandle : SafeHandle
    {
        internal ContextHandle(IntPtr ctx) : base(IntPtr.Zero, true) { SetHandle(ctx); }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override bool ReleaseHandle()
        {
            // zmq_ctx_term waits for lingering messages of closed sockets; retried on EINTR.
            while (Native.zmq_ctx_term(handle) != 0)
            {
                if (Native.LastErrno() != ZError.EINTR.Number) return false;
            }
            return true;
        }
    }

    /// <summary>
    /// A native socket. Released by <see cref="ZSocket.Dispose"/> (closing with the socket's
    /// linger) or, for a socket that was never disposed, by the finalizer with linger 0, so a
    /// forgotten socket neither leaks nor holds up its context's termination.
    /// </summary>
    internal sealed class SocketHandle : SafeHandle
    {
        readonly ContextHandle context;
        readonly ZContext owner;
        internal volatile bool Disposing;

        internal SocketHandle(IntPtr socket, ContextHandle context, ZContext owner) : base(IntPtr.Zero, true)
        {
            this.context = context;
            this.owner = owner;
            SetHandle(socket);
        }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override unsafe bool ReleaseHandle()
        {
            if (!Disposing)
            {
                int zero = 0;
                Native.zmq_setsockopt(handle, (int)ZSocketOption.LINGER, &zero, (UIntPtr)sizeof(int));
            }
            int rc = Native.zmq_close(handle);
            owner.SocketClosed();
            context.DangerousRelease();
            return rc == 0;
        }
    }

    /// <summary>
    /// Guards an object's native calls against a <c>Dispose</c> on another thread, more cheaply
    /// than a SafeHandle lease (Mono inlines neither <c>DangerousAddRef</c> nor
    /// <c>DangerousRelease</c>): twice the number of calls in progress, plus 1 once closed. The
    /// owner releases its native resource when <see cref="Close"/>, or the last
    /// <see cref="Leave"/> after it, says so; a Dispose racing a call never frees what the call
    /// uses. A mutable struct: keep it in a non-readonly field.
    /// </summary>
    internal struct CallGate
    {
        int v;

        /// <summary>Enters a call. False once closed: the caller must then <see cref="Leave"/> (and throw).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Enter() { return (Interlocked.Add(ref v, 2) & 1) == 0; }

        /// <summary>Leaves a call. True when the owner must release its resource now.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Leave() { return Interlocked.Add(ref v, -2) == 1; }

        /// <summary>Closes (once). True when no call is in progress and the owner must release now.</summary>
        internal bool Close() { return Interlocked.Increment(ref v) == 1; }
    }

    /// <summary>
    /// A <see cref="CallGate"/> with a second entry for raw calls (<see cref="FastCalls"/>: calls
    /// that never wait) made by the one thread that uses the object, which costs no interlocked
    /// instruction: that thread sets <c>raw</c> and then reads <c>closing</c>; <see cref="Close"/>
    /// sets <c>closing</c>, makes every thread's pending stores visible
    /// (<c>Interlocked.MemoryBarrierProcessWide</c>), waits for <c>raw</c> to clear (a raw call
    /// never waits, so neither does this for long), and only then closes the counted gate. So
    /// either the raw caller sees <c>closing</c> and stays out, or Close sees its <c>raw</c> and
    /// waits. The first thread to make a raw call owns the entry; any other thread (a socket
    /// handed over to another thread, or misused from two at once) takes the counted entry,
    /// which is safe from any number of threads. A mutable struct: keep it in a non-readonly
    /// field.
    /// </summary>
    internal struct RawCallGate
    {
        internal CallGate Counted;
        Thread owner;
        int raw;
        int closing;

        /// <summary>
        /// Enters a raw call on the owning thread (claiming ownership on first use). False when
        /// closing, or on another thread: the caller then takes <see cref="Counted"/>.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool EnterRaw()
        {
            if (owner != Thread.CurrentThread) return Claim();
            Volatile.Write(ref raw, 1);
            if (Volatile.Read(ref closing) == 0) return true;
            Volatile.Write(ref raw, 0);
            return false;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        bool Claim()
        {
            Thread me = Thread.CurrentThread;
            if (Interlocked.CompareExchange(ref owner, me, null) != null) return false;
            Volatile.Write(ref raw, 1);
            if (Volatile.Read(ref closing) == 0) return true;
            Volatile.Write(ref raw, 0);
            return false;
        }

        /// <summary>Leaves a raw call.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal void LeaveRaw() { Volatile.Write(ref raw, 0); }

        /// <summary>
        /// From inside a raw call to the counted gate (for a call that may wait): always
        /// succeeds, since Close waits for the raw call to end before it closes the counted gate.
        /// </summary>
        internal void RawToCounted()
        {
            Counted.Enter();
            LeaveRaw();
        }

        /// <summary>Closes (once), as <see cref="CallGate.Close"/>, after any raw call has ended.</summary>
        internal bool Close()
        {
            // A full fence before reading `owner`: a thread that claims it after this read
            // (its CompareExchange is a fence too) then reads `closing` as 1.
            Interlocked.Exchange(ref closing, 1);
            if (Volatile.Read(ref owner) != null)
            {
                Interlocked.MemoryBarrierProcessWide();
                var spin = new SpinWait();
                while (Volatile.Read(ref raw) != 0) spin.SpinOnce();
            }
            return Counted.Close();
        }
    }

    /// <summary>Holds a SafeHandle's reference for the span of one native call.</summary>
    internal struct HandleLease : IDisposable
    {
        readonly SafeHandle h;
        readonly bool added;

        internal HandleLease(SafeHandle h)
        {
            this.h = h;
            added = false;
            h.DangerousAddRef(ref added); // ObjectDisposedException once the handle is closed
        }

        internal IntPtr Ptr { get { return h.DangerousGetHandle(); } }

        public void Dispose()
        {
            if (added) h.DangerousRelease();
        }
    }
}
