// ZSocket: one ZeroMQ socket. Sending and receiving in three shapes: into and from the
// caller's buffers (no allocation per call), as ZFrames, and as ZMessages; options as
// properties.

using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace ZeroMQ
{
    /// <summary>
    /// A ZeroMQ socket. Like a libzmq socket it must be used by one thread at a time; create it
    /// from a <see cref="ZContext"/> and dispose it when done (closing it with its
    /// <see cref="Linger"/>).
    /// </summary>
    /// <remarks>
    /// Errors: a failed ZeroMQ call throws <see cref="ZException"/> (ETERM as
    /// <see cref="ZTerminatedException"/>, a blocking call that timed out as
    /// <see cref="ZTimeoutException"/>); the <c>out ZError</c> overloads report them instead of
    /// throwing; invalid arguments throw <see cref="ArgumentException"/>s; any call on a disposed
    /// socket throws <see cref="ObjectDisposedException"/>. The buffer calls
    /// (<see cref="ReceiveBytes(byte[], int, int)"/>, <see cref="SendBytes(byte[], int, int)"/>)
    /// pin the caller's array for the native call only and allocate nothing.
    /// </remarks>
    public sealed class ZSocket : IDisposable
    {
        const int EINTR = 4;
        const int EAGAIN = 11;

        readonly ZContext context;
        readonly SocketHandle handle;
        readonly ZSocketType type;
        // RCVTIMEO and SNDTIMEO as last set through this object: only a call with a timeout
        // reads the clock (to keep the deadline across an EINTR retry).
        int receiveTimeoutMs = -1;
        int sendTimeoutMs = -1;
        int disposed;

        /// <summary>Creates a socket of <paramref name="type"/> in <paramref name="context"/>.</summary>
        /// <exception cref="ObjectDisposedException">The context is disposed.</exception>
        /// <exception cref="ZException">EINVAL for an unknown type, EMFILE when the context is full,
        /// ETERM when the context is shut down.</exception>
        public ZSocket(ZContext context, ZSocketType type)
        {
            if (context == null) throw new ArgumentNullException("context");
            this.context = context;
            this.type = type;
            using (var c = context.Lease())
            {
                IntPtr s = Native.zmq_socket(c.Ptr, (int)type);
                if (s == IntPtr.Zero) throw ZException.For(ZError.GetLastErr(), "zmq_socket");
                bool added = false;
                try
                {
                    context.Handle.DangerousAddRef(ref added);
                }
                finally
                {
                    if (!added) Native.zmq_close(s);
                }
                context.SocketOpened();
                handle = new SocketHandle(s, context.Handle, context);
            }
        }

        /// <summary>Creates a socket (clrzmq4's factory name).</summary>
        public static ZSocket Create(ZContext context, ZSocketType type) { return new ZSocket(context, type); }

        /// <summary>The context the socket belongs to.</summary>
        public ZContext Context { get { return context; } }

        /// <summary>The socket's type.</summary>
        public ZSocketType SocketType { get { return type; } }

        /// <summary>True once <see cref="Dispose"/> has been called.</summary>
        public bool IsDisposed { get { return Volatile.Read(ref disposed) != 0; } }

        /// <summary>
        /// Closes the socket (<c>zmq_close</c>): unsent messages linger for <see cref="Linger"/>.
        /// Idempotent. If another thread is inside a call on this socket, the close happens when
        /// that call returns.
        /// </summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref disposed, 1) != 0) return;
            handle.Disposing = true;
            if (gate.Close()) handle.Dispose();
        }

        // The guard of the per-message calls (see RawCallGate and CallGate): Dispose closes the
        // handle at once when no call is in progress, else the last call to leave does (closing
        // twice is a no-op).
        RawCallGate gate;

        // Enter and Leave are written out in the per-message methods (Mono inlines neither a
        // method that throws nor a call in a finally block); these are their other paths.
        void Enter()
        {
            if (!gate.Counted.Enter()) EnterDisposed();
        }

        void Leave()
        {
            if (gate.Counted.Leave()) handle.Dispose();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        void EnterDisposed()
        {
            Leave();
            throw new ObjectDisposedException("ZSocket");
        }

        // ------------------------------------------------------------------ endpoints

        /// <summary>Binds to an endpoint ("tcp://127.0.0.1:*", "ipc:///tmp/x", "inproc://name").</summary>
        public void Bind(string endpoint) { Endpoint(endpoint, 0, "zmq_bind"); }
        /// <summary>Stops listening on a bound endpoint.</summary>
        public void Unbind(string endpoint) { Endpoint(endpoint, 1, "zmq_unbind"); }
        /// <summary>Connects to an endpoint (asynchronously: the connection is made in the background).</summary>
        public void Connect(string endpoint) { Endpoint(endpoint, 2, "zmq_connect"); }
        /// <summary>Disconnects from a connected endpoint.</summary>
        public void Disconnect(string endpoint) { Endpoint(endpoint, 3, "zmq_disconnect"); }

        /// <summary>PEER (draft): connects to <paramref name="endpoint"/> and returns that peer's
        /// routing id, to send to it at once (<c>zmq_connect_peer</c>).</summary>
        public unsafe uint ConnectPeer(string endpoint)
        {
            byte[] e = Native.Utf8z(endpoint, "endpoint");
            using (var s = Lease())
            fixed (byte* p = e)
            {
                uint id = Native.zmq_connect_peer(s.Ptr, p);
                if (id == 0) throw ZException.For(ZError.GetLastErr(), "zmq_connect_peer " + endpoint);
                return id;
            }
        }

        /// <summary>DISH (draft): joins <paramref name="group"/> (at most 255 bytes of UTF-8;
        /// joining twice is EINVAL, other types say ENOTSUP, as <c>zmq_join</c>).</summary>
        public void Join(string group) { Endpoint(group, 4, "zmq_join"); }

        /// <summary>DISH (draft): leaves <paramref name="group"/>; EINVAL if not joined.</summary>
        public void Leave(string group) { Endpoint(group, 5, "zmq_leave"); }

        unsafe void Endpoint(string endpoint, int op, string what)
        {
            byte[] e = Native.Utf8z(endpoint, "endpoint");
            int rc;
            using (var s = Lease())
            fixed (byte* p = e)
            {
                do
                {
                    switch (op)
                    {
                        case 0: rc = Native.zmq_bind(s.Ptr, p); break;
                        case 1: rc = Native.zmq_unbind(s.Ptr, p); break;
                        case 2: rc = Native.zmq_connect(s.Ptr, p); break;
                        case 4: rc = Native.zmq_join(s.Ptr, p); break;
                        case 5: rc = Native.zmq_leave(s.Ptr, p); break;
                        default: rc = Native.zmq_disconnect(s.Ptr, p); break;
                    }
                } while (rc != 0 && Native.LastErrno() == EINTR);
                if (rc != 0) throw ZException.For(ZError.GetLastErr(), what + " " + endpoint);
            }
        }

        // ------------------------------------------------------------------ receive into buffers

        /// <summary>
        /// Receives one frame into <paramref name="buffer"/>[<paramref name="offset"/>..], waiting up
        /// to <see cref="ReceiveTimeout"/>. Returns the frame's full length: when it is larger than
        /// <paramref name="count"/>, only <paramref name="count"/> bytes were stored (the rest is
        /// dropped, as <c>zmq_recv</c> does). Allocates nothing; <see cref="ReceiveMore"/> tells
        /// whether more frames of the message follow.
        /// </summary>
        /// <exception cref="ZTimeoutException">Nothing arrived within <see cref="ReceiveTimeout"/>.</exception>
        /// <exception cref="ZTerminatedException">The context was shut down.</exception>
        public unsafe int ReceiveBytes(byte[] buffer, int offset, int count)
        {
            CheckRange(buffer, offset, count);
            int n;
            fixed (byte* p = buffer) n = Recv(p + offset, count, 0);
            if (n < 0) throw ZException.For(ZError.FromErrno(-n), "zmq_recv");
            return n;
        }

        /// <summary>
        /// Receives one frame into a buffer with <paramref name="flags"/> (e.g.
        /// <see cref="ZSocketFlags.DontWait"/>); returns its full length, or -1 with
        /// <paramref name="error"/> set (EAGAIN, ETERM, ...) instead of throwing.
        /// </summary>
        public unsafe int ReceiveBytes(byte[] buffer, int offset, int count, ZSocketFlags flags, out ZError error)
        {
            CheckRange(buffer, offset, count);
            int n;
            fixed (byte* p = buffer) n = Recv(p + offset, count, (int)flags);
            return Result(n, out error);
        }

        /// <summary>Receives one frame into <paramref name="buffer"/>; as <see cref="ReceiveBytes(byte[], int, int)"/>.</summary>
        public unsafe int ReceiveBytes(Span<byte> buffer)
        {
            int n;
            fixed (byte* p = &MemoryMarshal.GetReference(buffer)) n = Recv(p, buffer.Length, 0);
            if (n < 0) throw ZException.For(ZError.FromErrno(-n), "zmq_recv");
            return n;
        }

        /// <summary>Receives one frame into <paramref name="buffer"/> with flags; -1 and <paramref name="error"/> on failure.</summary>
        public unsafe int ReceiveBytes(Span<byte> buffer, ZSocketFlags flags, out ZError error)
        {
            int n;
            fixed (byte* p = &MemoryMarshal.GetReference(buffer)) n = Recv(p, buffer.Length, (int)flags);
            return Result(n, out error);
        }

        /// <summary>
        /// Receives one frame if one is waiting, without blocking: false when none is (EAGAIN).
        /// <paramref name="length"/> is the frame's full length, as for
        /// <see cref="ReceiveBytes(byte[], int, int)"/>.
        /// </summary>
        /// <exception cref="ZTerminatedException">The context was shut down.</exception>
        public unsafe bool TryReceiveBytes(byte[] buffer, int offset, int count, out int length)
        {
            CheckRange(buffer, offset, count);
            int n;
            fixed (byte* p = buffer) n = Recv(p + offset, count, Native.ZMQ_DONTWAIT);
            if (n >= 0) { length = n; return true; }
            length = 0;
            if (n == -EAGAIN) return false;
            throw ZException.For(ZError.FromErrno(-n), "zmq_recv");
        }

        // The receive call: the length, or -errno. Retries EINTR, keeping the deadline of a
        // timeout; reads the clock only when a timeout is set.
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        unsafe int Recv(byte* p, int count, int flags)
        {
            return FastCalls.Enabled ? RecvFast(p, count, flags) : RecvPlain(p, count, flags);
        }

        // A raw call first (see FastCalls); the P/Invoke when it cannot proceed. Only compiled
        // where the raw calls are registered (hence NoInlining). A raw call neither throws nor
        // waits, so its success needs no finally block; the P/Invoke's wait may end in an
        // exception (Thread.Interrupt), so that path leaves the gate in one.
        [MethodImpl(MethodImplOptions.NoInlining)]
        unsafe int RecvFast(byte* p, int count, int flags)
        {
            if (!gate.EnterRaw()) return RecvCounted(p, count, flags);
            IntPtr s = handle.DangerousGetHandle();
            int n = FastCalls.zmq_recv(s, p, (void*)(uint)count, flags | Native.ZMQ_DONTWAIT);
            if (n < 0)
            {
                gate.RawToCounted();
                return RecvEntered(s, p, count, flags);
            }
            gate.LeaveRaw();
            return n;
        }

        // RecvFast through the counted entry: another thread than the raw entry's owner, or a
        // socket being disposed (then Enter fails and this throws).
        [MethodImpl(MethodImplOptions.NoInlining)]
        unsafe int RecvCounted(byte* p, int count, int flags)
        {
            if (!gate.Counted.Enter()) EnterDisposed();
            IntPtr s = handle.DangerousGetHandle();
            int n = FastCalls.zmq_recv(s, p, (void*)(uint)count, flags | Native.ZMQ_DONTWAIT);
            if (n < 0) return RecvEntered(s, p, count, flags);
            if (gate.Counted.Leave()) handle.Dispose();
            return n;
        }

        unsafe int RecvEntered(IntPtr s, byte* p, int count, int flags)
        {
            try
            {
                return RecvWait(s, p, count, flags);
            }
            finally
            {
                if (gate.Counted.Leave()) handle.Dispose();
            }
        }

        unsafe int RecvPlain(byte* p, int count, int flags)
        {
            if (!gate.Counted.Enter()) EnterDisposed();
            return RecvEntered(handle.DangerousGetHandle(), p, count, flags);
        }

        unsafe int RecvWait(IntPtr s, byte* p, int count, int flags)
        {
            long start = receiveTimeoutMs > 0 ? Stopwatch.GetTimestamp() : 0;
            int n = Native.zmq_recv(s, p, (UIntPtr)(uint)count, flags);
            if (n >= 0) return n;
            int e = Native.LastErrno();
            return e == EINTR ? RecvAgain(s, p, count, flags, start) : -e;
        }

        // The raw calls (see FastCalls) for frames: one if queued, else -1 with nothing done.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int MsgRecvNow(IntPtr m, IntPtr s, int flags)
        {
            return FastCalls.zmq_msg_recv(m, s, flags | Native.ZMQ_DONTWAIT);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int MsgSendNow(IntPtr m, IntPtr s, int flags)
        {
            return FastCalls.zmq_msg_send(m, s, flags | Native.ZMQ_DONTWAIT);
        }

        unsafe int RecvAgain(IntPtr s, byte* p, int count, int flags, long start)
        {
            while (true)
            {
                int left = Remaining(receiveTimeoutMs, flags, start);
                if (left == 0) return -EAGAIN;
                if (left > 0) SetTimeoutRaw(s, ZSocketOption.RCVTIMEO, left);
                int n = Native.zmq_recv(s, p, (UIntPtr)(uint)count, flags);
                int e = n < 0 ? Native.LastErrno() : 0;
                if (left > 0) SetTimeoutRaw(s, ZSocketOption.RCVTIMEO, receiveTimeoutMs);
                if (n >= 0) return n;
                if (e != EINTR) return -e;
            }
        }

        // Milliseconds left of a timeout after an interrupted wait: -1 none (retry as before),
        // 0 expired, otherwise what is left.
        static int Remaining(int timeoutMs, int flags, long start)
        {
            if (timeoutMs <= 0 || (flags & Native.ZMQ_DONTWAIT) != 0) return timeoutMs == 0 ? 0 : -1;
            long elapsedMs = (Stopwatch.GetTimestamp() - start) * 1000 / Stopwatch.Frequency;
            long left = timeoutMs - elapsedMs;
            return left <= 0 ? 0 : (int)left;
        }

        static unsafe void SetTimeoutRaw(IntPtr s, ZSocketOption option, int ms)
        {
            Native.zmq_setsockopt(s, (int)option, &ms, (UIntPtr)sizeof(int));
        }

        static int Result(int n, out ZError error)
        {
            if (n >= 0) { error = ZError.None; return n; }
            error = ZError.FromErrno(-n);
            return -1;
        }

        // The checks inline (Mono does not inline a method that throws, nor one this size
        // unless asked); the throws do not.
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static void CheckRange(byte[] buffer, int offset, int count)
        {
            if (buffer == null || (uint)offset > (uint)buffer.Length || (uint)count > (uint)(buffer.Length - offset))
                BadRange(buffer, offset);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void BadRange(byte[] buffer, int offset)
        {
            if (buffer == null) throw new ArgumentNullException("buffer");
            if ((uint)offset > (uint)buffer.Length) throw new ArgumentOutOfRangeException("offset");
            throw new ArgumentOutOfRangeException("count");
        }

        // ------------------------------------------------------------------ send from buffers

        /// <summary>Sends <paramref name="count"/> bytes of <paramref name="buffer"/> as one frame
        /// (copied; the array may be reused at once), waiting up to <see cref="SendTimeout"/> for room.</summary>
        /// <exception cref="ZTimeoutException">No room within <see cref="SendTimeout"/>.</exception>
        /// <exception cref="ZTerminatedException">The context was shut down.</exception>
        public void SendBytes(byte[] buffer, int offset, int count) { SendBytes(buffer, offset, count, ZSocketFlags.None); }

        /// <summary>Sends bytes as one frame with <paramref name="flags"/> (<see cref="ZSocketFlags.More"/>
        /// when more frames of the message follow). Throws on failure, EAGAIN included.</summary>
        public unsafe void SendBytes(byte[] buffer, int offset, int count, ZSocketFlags flags)
        {
            CheckRange(buffer, offset, count);
            int n;
            fixed (byte* p = buffer) n = Send(p + offset, count, (int)flags);
            if (n < 0) throw ZException.For(ZError.FromErrno(-n), "zmq_send");
        }

        /// <summary>Sends bytes as one frame; false with <paramref name="error"/> set instead of throwing.</summary>
        public unsafe bool SendBytes(byte[] buffer, int offset, int count, ZSocketFlags flags, out ZError error)
        {
            CheckRange(buffer, offset, count);
            int n;
            fixed (byte* p = buffer) n = Send(p + offset, count, (int)flags);
            return Result(n, out error) >= 0;
        }

        /// <summary>Sends <paramref name="data"/> as one frame (copied).</summary>
        public unsafe void SendBytes(ReadOnlySpan<byte> data, ZSocketFlags flags)
        {
            int n;
            fixed (byte* p = &MemoryMarshal.GetReference(data)) n = Send(p, data.Length, (int)flags);
            if (n < 0) throw ZException.For(ZError.FromErrno(-n), "zmq_send");
        }

        /// <summary>Sends bytes without blocking: false when there is no room now (EAGAIN).</summary>
        /// <exception cref="ZTerminatedException">The context was shut down.</exception>
        public unsafe bool TrySendBytes(byte[] buffer, int offset, int count, ZSocketFlags flags)
        {
            CheckRange(buffer, offset, count);
            int n;
            fixed (byte* p = buffer) n = Send(p + offset, count, (int)flags | Native.ZMQ_DONTWAIT);
            if (n >= 0) return true;
            if (n == -EAGAIN) return false;
            throw ZException.For(ZError.FromErrno(-n), "zmq_send");
        }

        /// <summary>Sends a UTF-8 string as one frame.</summary>
        public void SendString(string text, ZSocketFlags flags = ZSocketFlags.None)
        {
            if (text == null) throw new ArgumentNullException("text");
            byte[] b = Encoding.UTF8.GetBytes(text);
            SendBytes(b, 0, b.Length, flags);
        }

        /// <summary>Receives one frame as a UTF-8 string (allocates the string and its bytes).</summary>
        public string ReceiveString()
        {
            using (ZFrame f = ReceiveFrame()) return f.ReadString();
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        unsafe int Send(byte* p, int count, int flags)
        {
            return FastCalls.Enabled ? SendFast(p, count, flags) : SendPlain(p, count, flags);
        }

        // As RecvFast.
        [MethodImpl(MethodImplOptions.NoInlining)]
        unsafe int SendFast(byte* p, int count, int flags)
        {
            if (!gate.EnterRaw()) return SendCounted(p, count, flags);
            IntPtr s = handle.DangerousGetHandle();
            int n = FastCalls.zmq_send(s, p, (void*)(uint)count, flags | Native.ZMQ_DONTWAIT);
            if (n < 0)
            {
                gate.RawToCounted();
                return SendEntered(s, p, count, flags);
            }
            gate.LeaveRaw();
            return n;
        }

        // As RecvCounted.
        [MethodImpl(MethodImplOptions.NoInlining)]
        unsafe int SendCounted(byte* p, int count, int flags)
        {
            if (!gate.Counted.Enter()) EnterDisposed();
            IntPtr s = handle.DangerousGetHandle();
            int n = FastCalls.zmq_send(s, p, (void*)(uint)count, flags | Native.ZMQ_DONTWAIT);
            if (n < 0) return SendEntered(s, p, count, flags);
            if (gate.Counted.Leave()) handle.Dispose();
            return n;
        }

        unsafe int SendEntered(IntPtr s, byte* p, int count, int flags)
        {
            try
            {
                return SendWait(s, p, count, flags);
            }
            finally
            {
                if (gate.Counted.Leave()) handle.Dispose();
            }
        }

        unsafe int SendPlain(byte* p, int count, int flags)
        {
            if (!gate.Counted.Enter()) EnterDisposed();
            return SendEntered(handle.DangerousGetHandle(), p, count, flags);
        }

        unsafe int SendWait(IntPtr s, byte* p, int count, int flags)
        {
            long start = sendTimeoutMs > 0 ? Stopwatch.GetTimestamp() : 0;
            while (true)
            {
                int n = Native.zmq_send(s, p, (UIntPtr)(uint)count, flags);
                if (n >= 0) return n;
                int e = Native.LastErrno();
                if (e != EINTR) return -e;
                // Interrupted: retry within what is left of the timeout (rare path).
                if (Remaining(sendTimeoutMs, flags, start) == 0) return -EAGAIN;
            }
        }

        // ------------------------------------------------------------------ frames and messages

        /// <summary>Receives one frame as a new <see cref="ZFrame"/> (the caller disposes it).</summary>
        /// <exception cref="ZTimeoutException">Nothing arrived within <see cref="ReceiveTimeout"/>.</exception>
        /// <exception cref="ZTerminatedException">The context was shut down.</exception>
        public ZFrame ReceiveFrame()
        {
            ZError error;
            ZFrame f = ReceiveFrame(ZSocketFlags.None, out error);
            if (f == null) throw ZException.For(error, "zmq_msg_recv");
            return f;
        }

        /// <summary>Receives one frame with flags; null with <paramref name="error"/> set on failure.</summary>
        public ZFrame ReceiveFrame(ZSocketFlags flags, out ZError error)
        {
            var f = new ZFrame();
            int n = ReceiveInto(f, (int)flags);
            if (n >= 0) { error = ZError.None; return f; }
            f.Dispose();
            error = ZError.FromErrno(-n);
            return null;
        }

        /// <summary>
        /// Receives all frames of the next message. Waits for the first frame up to
        /// <see cref="ReceiveTimeout"/>; the rest of the message is already there (ZeroMQ delivers
        /// messages whole).
        /// </summary>
        public ZMessage ReceiveMessage()
        {
            var m = new ZMessage();
            try
            {
                do
                {
                    m.Add(ReceiveFrame());
                } while (m[m.Count - 1].More);
                return m;
            }
            catch
            {
                m.Dispose();
                throw;
            }
        }

        internal int ReceiveInto(ZFrame frame, int flags)
        {
            if (Volatile.Read(ref disposed) != 0) throw new ObjectDisposedException("ZSocket");
            using (var m = frame.Lease())
            {
                Enter();
                try
                {
                    IntPtr s = handle.DangerousGetHandle();
                    if (FastCalls.Enabled)
                    {
                        int q = MsgRecvNow(m.Ptr, s, flags);
                        if (q >= 0) return q;
                    }
                    long start = receiveTimeoutMs > 0 ? Stopwatch.GetTimestamp() : 0;
                    while (true)
                    {
                        int n = Native.zmq_msg_recv(m.Ptr, s, flags);
                        if (n >= 0) return n;
                        int e = Native.LastErrno();
                        if (e != EINTR) return -e;
                        if (Remaining(receiveTimeoutMs, flags, start) == 0) return -EAGAIN;
                    }
                }
                finally
                {
                    Leave();
                }
            }
        }

        /// <summary>
        /// Sends a frame and disposes it: its content is handed to ZeroMQ without a copy. On
        /// failure it throws and the frame stays the caller's.
        /// </summary>
        public void SendFrame(ZFrame frame, ZSocketFlags flags = ZSocketFlags.None)
        {
            ZError error;
            if (!SendFrame(frame, flags, out error)) throw ZException.For(error, "zmq_msg_send");
        }

        /// <summary>Sends a frame with <see cref="ZSocketFlags.More"/> (more frames follow) and disposes it.</summary>
        public void SendFrameMore(ZFrame frame) { SendFrame(frame, ZSocketFlags.More); }

        /// <summary>Sends a frame and disposes it; false with <paramref name="error"/> set (frame kept) on failure.</summary>
        public bool SendFrame(ZFrame frame, ZSocketFlags flags, out ZError error)
        {
            if (frame == null) throw new ArgumentNullException("frame");
            if (Volatile.Read(ref disposed) != 0) throw new ObjectDisposedException("ZSocket");
            int n;
            using (var m = frame.Lease())
            {
                Enter();
                try
                {
                    IntPtr s = handle.DangerousGetHandle();
                    n = FastCalls.Enabled ? MsgSendNow(m.Ptr, s, (int)flags) : -1;
                    long start = sendTimeoutMs > 0 ? Stopwatch.GetTimestamp() : 0;
                    while (n < 0)
                    {
                        n = Native.zmq_msg_send(m.Ptr, s, (int)flags);
                        if (n >= 0) break;
                        int e = Native.LastErrno();
                        n = -e;
                        if (e != EINTR) break;
                        if (Remaining(sendTimeoutMs, (int)flags, start) == 0) { n = -EAGAIN; break; }
                    }
                }
                finally
                {
                    Leave();
                }
            }
            if (n < 0) { error = ZError.FromErrno(-n); return false; }
            frame.Dispose();
            error = ZError.None;
            return true;
        }

        /// <summary>Sends every frame of <paramref name="message"/> as one message and disposes it.</summary>
        public void SendMessage(ZMessage message)
        {
            if (message == null) throw new ArgumentNullException("message");
            if (message.Count == 0) throw new ArgumentException("a message needs at least one frame", "message");
            int last = message.Count - 1;
            for (int i = 0; i <= last; i++)
                SendFrame(message[i], i < last ? ZSocketFlags.More : ZSocketFlags.None);
            message.Dispose();
        }

        // ------------------------------------------------------------------ subscriptions, monitor, poll

        /// <summary>SUB/XSUB: receive messages whose first frame starts with <paramref name="prefix"/>.</summary>
        public void Subscribe(byte[] prefix) { SetOption(ZSocketOption.SUBSCRIBE, prefix ?? new byte[0]); }
        /// <summary>SUB/XSUB: receive messages whose first frame starts with the UTF-8 <paramref name="prefix"/>.</summary>
        public void Subscribe(string prefix) { Subscribe(Encoding.UTF8.GetBytes(prefix ?? "")); }
        /// <summary>SUB/XSUB: receive every message.</summary>
        public void SubscribeAll() { Subscribe(new byte[0]); }
        /// <summary>Removes one subscription made with the same prefix.</summary>
        public void Unsubscribe(byte[] prefix) { SetOption(ZSocketOption.UNSUBSCRIBE, prefix ?? new byte[0]); }
        /// <summary>Removes one subscription made with the same UTF-8 prefix.</summary>
        public void Unsubscribe(string prefix) { Unsubscribe(Encoding.UTF8.GetBytes(prefix ?? "")); }
        /// <summary>Removes the subscription made by <see cref="SubscribeAll"/>.</summary>
        public void UnsubscribeAll() { Unsubscribe(new byte[0]); }

        /// <summary>
        /// Publishes this socket's events to a PAIR socket bound at the inproc
        /// <paramref name="endpoint"/> (<c>zmq_socket_monitor</c>); null stops monitoring.
        /// <see cref="ZMonitor"/> does both ends.
        /// </summary>
        public unsafe void Monitor(string endpoint, ZMonitorEvents events = ZMonitorEvents.AllEvents)
        {
            byte[] e = endpoint == null ? null : Native.Utf8z(endpoint, "endpoint");
            using (var s = Lease())
            fixed (byte* p = e)
            {
                if (Native.zmq_socket_monitor(s.Ptr, p, (int)events) != 0)
                    throw ZException.For(ZError.GetLastErr(), "zmq_socket_monitor");
            }
        }

        /// <summary>Waits up to <paramref name="timeout"/> until a message can be received.</summary>
        public bool PollIn(TimeSpan timeout) { return ZPolling.PollOne(this, ZPollEvents.In, timeout); }

        /// <summary>Waits up to <paramref name="timeout"/> until a message can be sent.</summary>
        public bool PollOut(TimeSpan timeout) { return ZPolling.PollOne(this, ZPollEvents.Out, timeout); }

        internal HandleLease Lease()
        {
            if (Volatile.Read(ref disposed) != 0) throw new ObjectDisposedException("ZSocket");
            return new HandleLease(handle);
        }

        // ------------------------------------------------------------------ options

        /// <summary>Sets an integer option.</summary>
        /// <exception cref="ZException">EINVAL: unknown option, invalid value, or not for this socket type.</exception>
        public unsafe void SetOption(ZSocketOption option, int value)
        {
            SetRaw(option, &value, sizeof(int));
            if (option == ZSocketOption.RCVTIMEO) receiveTimeoutMs = value;
            else if (option == ZSocketOption.SNDTIMEO) sendTimeoutMs = value;
        }

        /// <summary>Sets a 64-bit option (MAXMSGSIZE).</summary>
        public unsafe void SetOption(ZSocketOption option, long value) { SetRaw(option, &value, sizeof(long)); }

        /// <summary>Sets an unsigned 64-bit option (AFFINITY).</summary>
        public unsafe void SetOption(ZSocketOption option, ulong value) { SetRaw(option, &value, sizeof(ulong)); }

        /// <summary>Sets a binary option (SUBSCRIBE, IDENTITY, CURVE keys); null is empty.</summary>
        public unsafe void SetOption(ZSocketOption option, byte[] value)
        {
            value = value ?? new byte[0];
            fixed (byte* p = value) SetRaw(option, p, value.Length);
        }

        /// <summary>Sets a string option (UTF-8, no terminator: PLAIN_USERNAME, ZAP_DOMAIN, Z85 keys).</summary>
        public void SetOption(ZSocketOption option, string value)
        {
            SetOption(option, Encoding.UTF8.GetBytes(value ?? ""));
        }

        unsafe void SetRaw(ZSocketOption option, void* value, int len)
        {
            using (var s = Lease())
            {
                int rc;
                do rc = Native.zmq_setsockopt(s.Ptr, (int)option, value, (UIntPtr)(uint)len);
                while (rc != 0 && Native.LastErrno() == EINTR);
                if (rc != 0) throw ZException.For(ZError.GetLastErr(), "zmq_setsockopt " + option);
            }
        }

        /// <summary>Reads an integer option.</summary>
        public unsafe int GetOptionInt32(ZSocketOption option)
        {
            int v = 0;
            GetRaw(option, &v, sizeof(int));
            return v;
        }

        /// <summary>Reads a 64-bit option.</summary>
        public unsafe long GetOptionInt64(ZSocketOption option)
        {
            long v = 0;
            GetRaw(option, &v, sizeof(long));
            return v;
        }

        /// <summary>Reads an unsigned 64-bit option.</summary>
        public unsafe ulong GetOptionUInt64(ZSocketOption option)
        {
            ulong v = 0;
            GetRaw(option, &v, sizeof(ulong));
            return v;
        }

        /// <summary>Reads a binary option (up to 256 bytes).</summary>
        public unsafe byte[] GetOptionBytes(ZSocketOption option)
        {
            byte* buf = stackalloc byte[256];
            int n = GetRaw(option, buf, 256);
            var r = new byte[n];
            Marshal.Copy((IntPtr)buf, r, 0, n);
            return r;
        }

        /// <summary>Reads a string option (LAST_ENDPOINT, Z85 keys ...), without its NUL terminator.</summary>
        public unsafe string GetOptionString(ZSocketOption option)
        {
            byte* buf = stackalloc byte[1024];
            int n = GetRaw(option, buf, 1024);
            while (n > 0 && buf[n - 1] == 0) n--;
            return Encoding.UTF8.GetString(buf, n);
        }

        unsafe int GetRaw(ZSocketOption option, void* value, int len)
        {
            using (var s = Lease())
            {
                UIntPtr size = (UIntPtr)(uint)len;
                int rc;
                do rc = Native.zmq_getsockopt(s.Ptr, (int)option, value, &size);
                while (rc != 0 && Native.LastErrno() == EINTR);
                if (rc != 0) throw ZException.For(ZError.GetLastErr(), "zmq_getsockopt " + option);
                return (int)(uint)size;
            }
        }

        static int Millis(TimeSpan t, string name)
        {
            if (t == Timeout.InfiniteTimeSpan) return -1;
            if (t < TimeSpan.Zero)
                throw new ArgumentOutOfRangeException(name, "negative (use Timeout.InfiniteTimeSpan for none)");
            double ms = Math.Ceiling(t.TotalMilliseconds);
            if (ms > int.MaxValue) throw new ArgumentOutOfRangeException(name, "too large");
            return (int)ms;
        }

        static TimeSpan FromMillis(int ms)
        {
            return ms < 0 ? Timeout.InfiniteTimeSpan : TimeSpan.FromMilliseconds(ms);
        }

        /// <summary>How long unsent messages linger after <see cref="Dispose"/>
        /// (<c>ZMQ_LINGER</c>; <see cref="Timeout.InfiniteTimeSpan"/>: until sent, the default).</summary>
        public TimeSpan Linger
        {
            get { return FromMillis(GetOptionInt32(ZSocketOption.LINGER)); }
            set { SetOption(ZSocketOption.LINGER, Millis(value, "Linger")); }
        }

        /// <summary>How long a blocking receive waits (<c>ZMQ_RCVTIMEO</c>; infinite by default).</summary>
        public TimeSpan ReceiveTimeout
        {
            get { return FromMillis(GetOptionInt32(ZSocketOption.RCVTIMEO)); }
            set { SetOption(ZSocketOption.RCVTIMEO, Millis(value, "ReceiveTimeout")); }
        }

        /// <summary>How long a blocking send waits for room (<c>ZMQ_SNDTIMEO</c>; infinite by default).</summary>
        public TimeSpan SendTimeout
        {
            get { return FromMillis(GetOptionInt32(ZSocketOption.SNDTIMEO)); }
            set { SetOption(ZSocketOption.SNDTIMEO, Millis(value, "SendTimeout")); }
        }

        /// <summary>Inbound high-water mark in messages (<c>ZMQ_RCVHWM</c>; 0: none).</summary>
        public int ReceiveHighWatermark
        {
            get { return GetOptionInt32(ZSocketOption.RCVHWM); }
            set { SetOption(ZSocketOption.RCVHWM, value); }
        }

        /// <summary>Outbound high-water mark in messages (<c>ZMQ_SNDHWM</c>; 0: none).</summary>
        public int SendHighWatermark
        {
            get { return GetOptionInt32(ZSocketOption.SNDHWM); }
            set { SetOption(ZSocketOption.SNDHWM, value); }
        }

        /// <summary>The socket's routing id as its peers see it (<c>ZMQ_IDENTITY</c>/<c>ZMQ_ROUTING_ID</c>, 1-255 bytes).</summary>
        public byte[] Identity
        {
            get { return GetOptionBytes(ZSocketOption.IDENTITY); }
            set { SetOption(ZSocketOption.IDENTITY, value); }
        }

        /// <summary>The endpoint last bound or connected, with the port chosen for "tcp://host:*" (<c>ZMQ_LAST_ENDPOINT</c>).</summary>
        public string LastEndpoint { get { return GetOptionString(ZSocketOption.LAST_ENDPOINT); } }

        /// <summary>Whether more frames of the message being received follow (<c>ZMQ_RCVMORE</c>).</summary>
        public bool ReceiveMore { get { return GetOptionInt32(ZSocketOption.RCVMORE) != 0; } }

        /// <summary>What the socket can do now without blocking (<c>ZMQ_EVENTS</c>).</summary>
        public ZPollEvents Events { get { return (ZPollEvents)GetOptionInt32(ZSocketOption.EVENTS); } }

        /// <summary>Listen backlog (<c>ZMQ_BACKLOG</c>).</summary>
        public int Backlog
        {
            get { return GetOptionInt32(ZSocketOption.BACKLOG); }
            set { SetOption(ZSocketOption.BACKLOG, value); }
        }

        /// <summary>I/O thread affinity bitmask (<c>ZMQ_AFFINITY</c>).</summary>
        public ulong Affinity
        {
            get { return GetOptionUInt64(ZSocketOption.AFFINITY); }
            set { SetOption(ZSocketOption.AFFINITY, value); }
        }

        /// <summary>Largest inbound message accepted, in bytes (<c>ZMQ_MAXMSGSIZE</c>; -1: no limit).</summary>
        public long MaxMessageSize
        {
            get { return GetOptionInt64(ZSocketOption.MAXMSGSIZE); }
            set { SetOption(ZSocketOption.MAXMSGSIZE, value); }
        }

        /// <summary>First reconnection delay (<c>ZMQ_RECONNECT_IVL</c>).</summary>
        public TimeSpan ReconnectInterval
        {
            get { return FromMillis(GetOptionInt32(ZSocketOption.RECONNECT_IVL)); }
            set { SetOption(ZSocketOption.RECONNECT_IVL, Millis(value, "ReconnectInterval")); }
        }

        /// <summary>Queue messages only for completed connections (<c>ZMQ_IMMEDIATE</c>).</summary>
        public bool Immediate
        {
            get { return GetOptionInt32(ZSocketOption.IMMEDIATE) != 0; }
            set { SetOption(ZSocketOption.IMMEDIATE, value ? 1 : 0); }
        }

        /// <summary>Keep only the newest message (<c>ZMQ_CONFLATE</c>).</summary>
        public bool Conflate
        {
            get { return GetOptionInt32(ZSocketOption.CONFLATE) != 0; }
            set { SetOption(ZSocketOption.CONFLATE, value ? 1 : 0); }
        }

        /// <summary>ROUTER: fail with EHOSTUNREACH for unknown peers instead of dropping (<c>ZMQ_ROUTER_MANDATORY</c>).</summary>
        public bool RouterMandatory
        {
            get { return GetOptionInt32(ZSocketOption.ROUTER_MANDATORY) != 0; }
            set { SetOption(ZSocketOption.ROUTER_MANDATORY, value ? 1 : 0); }
        }

        /// <summary>
        /// oxmq only (<c>ZMQ_OXMQ_DNS_FOLLOW</c>): a tcp connect to a host name made while this is
        /// true connects to every address the name resolves to, as one endpoint the socket's
        /// pattern spreads over, and follows the name (looked up every <see cref="DnsInterval"/>
        /// and when a connection is lost); false, the default, is libzmq's behaviour.
        /// </summary>
        public bool DnsFollow
        {
            get { return GetOptionInt32(ZSocketOption.OXMQ_DNS_FOLLOW) != 0; }
            set { SetOption(ZSocketOption.OXMQ_DNS_FOLLOW, value ? 1 : 0); }
        }

        /// <summary>oxmq only (<c>ZMQ_OXMQ_DNS_IVL</c>): time between lookups of a followed name (30 s; 100 ms to 1 day).</summary>
        public TimeSpan DnsInterval
        {
            get { return FromMillis(GetOptionInt32(ZSocketOption.OXMQ_DNS_IVL)); }
            set { SetOption(ZSocketOption.OXMQ_DNS_IVL, Millis(value, "DnsInterval")); }
        }

        /// <summary>oxmq only (<c>ZMQ_OXMQ_NAME</c>): the socket's name in <see cref="ZContext.Metrics"/>
        /// (at most 64 letters, digits and <c>_ - . : /</c>; empty for none).</summary>
        public string MetricsName
        {
            get { return GetOptionString(ZSocketOption.OXMQ_NAME); }
            set { SetOption(ZSocketOption.OXMQ_NAME, value ?? ""); }
        }

        /// <summary>Time allowed for the ZMTP handshake (<c>ZMQ_HANDSHAKE_IVL</c>).</summary>
        public TimeSpan HandshakeInterval
        {
            get { return FromMillis(GetOptionInt32(ZSocketOption.HANDSHAKE_IVL)); }
            set { SetOption(ZSocketOption.HANDSHAKE_IVL, Millis(value, "HandshakeInterval")); }
        }

        /// <summary>Act as CURVE server (<c>ZMQ_CURVE_SERVER</c>); also set <see cref="CurveSecretKey"/>.</summary>
        public bool CurveServer
        {
            get { return GetOptionInt32(ZSocketOption.CURVE_SERVER) != 0; }
            set { SetOption(ZSocketOption.CURVE_SERVER, value ? 1 : 0); }
        }

        /// <summary>This socket's CURVE public key: 32 bytes, or 40 Z85 characters as bytes (<c>ZMQ_CURVE_PUBLICKEY</c>).</summary>
        public byte[] CurvePublicKey
        {
            get { return GetCurveKey(ZSocketOption.CURVE_PUBLICKEY); }
            set { SetOption(ZSocketOption.CURVE_PUBLICKEY, value); }
        }

        /// <summary>This socket's CURVE secret key: 32 bytes, or 40 Z85 characters as bytes (<c>ZMQ_CURVE_SECRETKEY</c>).</summary>
        public byte[] CurveSecretKey
        {
            get { return GetCurveKey(ZSocketOption.CURVE_SECRETKEY); }
            set { SetOption(ZSocketOption.CURVE_SECRETKEY, value); }
        }

        /// <summary>Client: the server's CURVE public key (<c>ZMQ_CURVE_SERVERKEY</c>); setting it makes this socket a CURVE client.</summary>
        public byte[] CurveServerKey
        {
            get { return GetCurveKey(ZSocketOption.CURVE_SERVERKEY); }
            set { SetOption(ZSocketOption.CURVE_SERVERKEY, value); }
        }

        unsafe byte[] GetCurveKey(ZSocketOption option)
        {
            byte* buf = stackalloc byte[32];
            int n = GetRaw(option, buf, 32);
            var r = new byte[n];
            Marshal.Copy((IntPtr)buf, r, 0, n);
            return r;
        }

        /// <summary>PLAIN server role (<c>ZMQ_PLAIN_SERVER</c>).</summary>
        public bool PlainServer
        {
            get { return GetOptionInt32(ZSocketOption.PLAIN_SERVER) != 0; }
            set { SetOption(ZSocketOption.PLAIN_SERVER, value ? 1 : 0); }
        }

        /// <summary>PLAIN user name (<c>ZMQ_PLAIN_USERNAME</c>).</summary>
        public string PlainUserName
        {
            get { return GetOptionString(ZSocketOption.PLAIN_USERNAME); }
            set { SetOption(ZSocketOption.PLAIN_USERNAME, value); }
        }

        /// <summary>PLAIN password (<c>ZMQ_PLAIN_PASSWORD</c>).</summary>
        public string PlainPassword
        {
            get { return GetOptionString(ZSocketOption.PLAIN_PASSWORD); }
            set { SetOption(ZSocketOption.PLAIN_PASSWORD, value); }
        }

        /// <summary>wss:// and tls://: the private key, PEM text (<c>ZMQ_WSS_KEY_PEM</c>, write only).</summary>
        public string WssKeyPem { set { SetOption(ZSocketOption.WSS_KEY_PEM, value); } }

        /// <summary>wss:// and tls://: the certificate chain presented, PEM text (<c>ZMQ_WSS_CERT_PEM</c>, write only).</summary>
        public string WssCertPem { set { SetOption(ZSocketOption.WSS_CERT_PEM, value); } }

        /// <summary>wss:// and tls://: trust anchors, PEM text; a server with them requires client
        /// certificates (<c>ZMQ_WSS_TRUST_PEM</c>, write only).</summary>
        public string WssTrustPem { set { SetOption(ZSocketOption.WSS_TRUST_PEM, value); } }

        /// <summary>wss:// and tls://: the name the server's certificate must carry (<c>ZMQ_WSS_HOSTNAME</c>, write only).</summary>
        public string WssHostname { set { SetOption(ZSocketOption.WSS_HOSTNAME, value); } }

        /// <summary>wss:// and tls://: trust the system's anchors too (<c>ZMQ_WSS_TRUST_SYSTEM</c>, write only).</summary>
        public bool WssTrustSystem { set { SetOption(ZSocketOption.WSS_TRUST_SYSTEM, value ? 1 : 0); } }

        /// <summary>ZAP domain (<c>ZMQ_ZAP_DOMAIN</c>).</summary>
        public string ZapDomain
        {
            get { return GetOptionString(ZSocketOption.ZAP_DOMAIN); }
            set { SetOption(ZSocketOption.ZAP_DOMAIN, value); }
        }

        /// <summary>TCP keepalive: -1 system default, 0 off, 1 on (<c>ZMQ_TCP_KEEPALIVE</c>).</summary>
        public int TcpKeepAlive
        {
            get { return GetOptionInt32(ZSocketOption.TCP_KEEPALIVE); }
            set { SetOption(ZSocketOption.TCP_KEEPALIVE, value); }
        }

        /// <summary>XPUB: pass on every subscription, duplicates too (<c>ZMQ_XPUB_VERBOSE</c>).</summary>
        public bool XPubVerbose
        {
            set { SetOption(ZSocketOption.XPUB_VERBOSE, value ? 1 : 0); }
        }

        /// <summary>The socket's type as the library reports it (<c>ZMQ_TYPE</c>).</summary>
        public ZSocketType NativeType { get { return (ZSocketType)GetOptionInt32(ZSocketOption.TYPE); } }

        /// <summary>"ZSocket(TYPE)".</summary>
        public override string ToString() { return "ZSocket(" + type + ")"; }
    }
}
