// ZFrame and ZMessage: native ZeroMQ messages (zmq_msg_t) owned by managed objects with a
// deterministic Dispose, for code that wants message objects rather than its own buffers.

using System;
using System.Collections;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace ZeroMQ
{
    /// <summary>
    /// One frame: a native <c>zmq_msg_t</c> and its body in native memory. Dispose it when done
    /// (a forgotten frame is freed by its finalizer). Sending it with
    /// <see cref="ZSocket.SendFrame(ZFrame, ZSocketFlags)"/> hands the body to ZeroMQ and disposes
    /// the frame. Not thread-safe.
    /// </summary>
    public sealed class ZFrame : IDisposable
    {
        // The zmq_msg_t, in native memory; zero once freed.
        IntPtr msg;
        int disposed;

        /// <summary>An empty frame.</summary>
        public ZFrame()
        {
            LibraryLoader.Ensure();
            msg = NewMsg();
        }

        [MethodImpl(MethodImplOptions.NoInlining)] // compiled after LibraryLoader.Ensure (see there)
        static IntPtr NewMsg()
        {
            IntPtr p = Marshal.AllocHGlobal(Native.MsgSize);
            MsgCalls.Init(p); // cannot fail; the block always holds a valid message
            return p;
        }

        /// <summary>Frees a frame that was never disposed.</summary>
        ~ZFrame() { Free(); }

        // zmq_msg_close on a message that no call is using is safe from any thread (the
        // finalizer's included); the exchange makes it happen once.
        void Free()
        {
            IntPtr p = Interlocked.Exchange(ref msg, IntPtr.Zero);
            if (p == IntPtr.Zero) return;
            MsgCalls.Close(p);
            Marshal.FreeHGlobal(p);
        }

        /// <summary>A frame of <paramref name="size"/> bytes, zero-filled.</summary>
        public ZFrame(int size) : this((long)size) { }

        /// <summary>A frame of <paramref name="size"/> bytes, zero-filled; over 2 GiB too (read
        /// such a frame through <see cref="LongLength"/> and <see cref="AsSpan(long, int)"/>).</summary>
        public ZFrame(long size) : this()
        {
            if (size < 0) throw new ArgumentOutOfRangeException("size");
            Resize(size);
            Clear();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        unsafe void Clear()
        {
            byte* p = (byte*)MsgCalls.Data(msg);
            long n = MsgCalls.LongSize(msg);
            for (long i = 0; i < n; i++) p[i] = 0;
        }

        /// <summary>A frame holding a copy of <paramref name="data"/>.</summary>
        public ZFrame(byte[] data) : this(data, 0, data == null ? 0 : data.Length) { }

        /// <summary>A frame holding a copy of <paramref name="count"/> bytes of <paramref name="data"/> from <paramref name="offset"/>.</summary>
        public ZFrame(byte[] data, int offset, int count) : this()
        {
            if (data == null) throw new ArgumentNullException("data");
            if ((uint)offset > (uint)data.Length) throw new ArgumentOutOfRangeException("offset");
            if ((uint)count > (uint)(data.Length - offset)) throw new ArgumentOutOfRangeException("count");
            Resize(count);
            if (count > 0) CopyIn(data, offset, count);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        void CopyIn(byte[] data, int offset, int count)
        {
            Marshal.Copy(data, offset, MsgCalls.Data(msg), count);
        }

        /// <summary>A frame holding <paramref name="text"/> in UTF-8.</summary>
        public ZFrame(string text) : this(Encoding.UTF8.GetBytes(text ?? throw new ArgumentNullException("text"))) { }

        [MethodImpl(MethodImplOptions.NoInlining)]
        void Resize(long size)
        {
            IntPtr p = msg;
            MsgCalls.Close(p);
            if (Native.zmq_msg_init_size(p, (UIntPtr)(ulong)size) != 0)
            {
                ZError e = ZError.GetLastErr();
                MsgCalls.Init(p);
                Dispose();
                throw ZException.For(e, "zmq_msg_init_size");
            }
        }

        /// <summary>The body's length in bytes; <see cref="OverflowException"/> for a frame over
        /// 2 GiB (see <see cref="LongLength"/>).</summary>
        public int Length
        {
            get { using (var m = Lease()) return MsgCalls.Size(m.Ptr); }
        }

        /// <summary>The body's length in bytes, whatever its size (libzmq's frames may exceed 2 GiB).</summary>
        public long LongLength
        {
            get { using (var m = Lease()) return MsgCalls.LongSize(m.Ptr); }
        }

        /// <summary>SERVER, PEER (draft): the peer this frame came from, or the one to send it to;
        /// 0 when none. Setting 0 is refused (<see cref="ZException"/>, EINVAL), as
        /// <c>zmq_msg_set_routing_id</c>.</summary>
        public uint RoutingId
        {
            get { using (var m = Lease()) return Native.zmq_msg_routing_id(m.Ptr); }
            set
            {
                using (var m = Lease())
                    if (Native.zmq_msg_set_routing_id(m.Ptr, value) != 0)
                        throw ZException.For(ZError.GetLastErr(), "zmq_msg_set_routing_id");
            }
        }

        /// <summary>RADIO, DISH (draft): the group this frame came in, or the one a RADIO sends it
        /// to; "" when none. At most 255 bytes of UTF-8 (EINVAL beyond, as
        /// <c>zmq_msg_set_group</c>).</summary>
        public unsafe string Group
        {
            get
            {
                using (var m = Lease())
                {
                    byte* g = Native.zmq_msg_group(m.Ptr);
                    if (g == null) return "";
                    int n = 0;
                    while (g[n] != 0) n++;
                    return Encoding.UTF8.GetString(g, n);
                }
            }
            set
            {
                byte[] g = Native.Utf8z(value, "group");
                using (var m = Lease())
                fixed (byte* p = g)
                    if (Native.zmq_msg_set_group(m.Ptr, p) != 0)
                        throw ZException.For(ZError.GetLastErr(), "zmq_msg_set_group");
            }
        }

        /// <summary>
        /// A metadata property of a received frame (<c>zmq_msg_gets</c>), as clrzmq4's: "Socket-Type",
        /// "Routing-Id", "Peer-Address", "User-Id" (the identity ZAP accepted), "TLS-Peer-Subject"
        /// (tls:// and wss://: the subject of the certificate the peer presented and this side
        /// verified, RFC 4514 text), or one the peer sent in its handshake. Null when the frame has
        /// no such property or did not arrive on a connection (libzmq's EINVAL).
        /// </summary>
        public unsafe string GetOption(string property)
        {
            byte[] name = Native.Utf8z(property, "property");
            using (var m = Lease())
            fixed (byte* p = name)
            {
                byte* v = Native.zmq_msg_gets(m.Ptr, p);
                if (v == null)
                {
                    ZError e = ZError.GetLastErr();
                    if (e == ZError.EINVAL) return null;
                    throw ZException.For(e, "zmq_msg_gets");
                }
                int n = 0;
                while (v[n] != 0) n++;
                return Encoding.UTF8.GetString(v, n);
            }
        }

        /// <summary>Whether more frames of the same message followed this one when it was received.</summary>
        public bool More
        {
            get { using (var m = Lease()) return MsgCalls.More(m.Ptr); }
        }

        /// <summary>The body's address; valid until the frame is sent or disposed.</summary>
        public IntPtr DataPtr()
        {
            using (var m = Lease()) return MsgCalls.Data(m.Ptr);
        }

        /// <summary>The body as a span over native memory; valid until the frame is sent or disposed.
        /// <see cref="OverflowException"/> for a frame over 2 GiB (see <see cref="AsSpan(long, int)"/>).</summary>
        public unsafe Span<byte> AsSpan()
        {
            using (var m = Lease())
                return new Span<byte>((void*)MsgCalls.Data(m.Ptr), MsgCalls.Size(m.Ptr));
        }

        /// <summary><paramref name="length"/> bytes of the body from <paramref name="start"/>, as a
        /// span over native memory (a frame over 2 GiB is read in such parts); valid until the
        /// frame is sent or disposed.</summary>
        public unsafe Span<byte> AsSpan(long start, int length)
        {
            using (var m = Lease())
            {
                long n = MsgCalls.LongSize(m.Ptr);
                if (start < 0 || start > n) throw new ArgumentOutOfRangeException("start");
                if (length < 0 || length > n - start) throw new ArgumentOutOfRangeException("length");
                return new Span<byte>((byte*)MsgCalls.Data(m.Ptr) + start, length);
            }
        }

        /// <summary>Copies up to <paramref name="count"/> bytes of the body into <paramref name="buffer"/>; returns how many.</summary>
        public int Read(byte[] buffer, int offset, int count)
        {
            if (buffer == null) throw new ArgumentNullException("buffer");
            if ((uint)offset > (uint)buffer.Length) throw new ArgumentOutOfRangeException("offset");
            if ((uint)count > (uint)(buffer.Length - offset)) throw new ArgumentOutOfRangeException("count");
            using (var m = Lease())
            {
                int n = (int)Math.Min(count, MsgCalls.LongSize(m.Ptr));
                if (n > 0) Marshal.Copy(MsgCalls.Data(m.Ptr), buffer, offset, n);
                return n;
            }
        }

        /// <summary>A copy of the body.</summary>
        public byte[] Read()
        {
            using (var m = Lease())
            {
                var r = new byte[MsgCalls.Size(m.Ptr)];
                if (r.Length > 0) Marshal.Copy(MsgCalls.Data(m.Ptr), r, 0, r.Length);
                return r;
            }
        }

        /// <summary>The body decoded as UTF-8.</summary>
        public string ReadString() { return ReadString(Encoding.UTF8); }

        /// <summary>The body decoded with <paramref name="encoding"/>.</summary>
        public unsafe string ReadString(Encoding encoding)
        {
            if (encoding == null) throw new ArgumentNullException("encoding");
            using (var m = Lease())
            {
                int n = MsgCalls.Size(m.Ptr);
                return n == 0 ? "" : encoding.GetString((byte*)MsgCalls.Data(m.Ptr), n);
            }
        }

        /// <summary>A new frame sharing this one's body (<c>zmq_msg_copy</c>: no byte copy).</summary>
        public ZFrame Duplicate()
        {
            var f = new ZFrame();
            using (var src = Lease())
            using (var dst = f.Lease())
            {
                if (Native.zmq_msg_copy(dst.Ptr, src.Ptr) != 0)
                {
                    ZError e = ZError.GetLastErr();
                    f.Dispose();
                    throw ZException.For(e, "zmq_msg_copy");
                }
            }
            return f;
        }

        /// <summary>True once disposed (or sent).</summary>
        public bool IsDisposed { get { return Volatile.Read(ref disposed) != 0; } }

        /// <summary>Closes the native message and frees its memory. Idempotent.</summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref disposed, 1) != 0) return;
            if (gate.Close()) Free();
            GC.SuppressFinalize(this);
        }

        // The frame's native calls against a Dispose on another thread (see CallGate).
        CallGate gate;

        internal FrameLease Lease()
        {
            if (!gate.Enter())
            {
                Leave();
                throw new ObjectDisposedException("ZFrame");
            }
            return new FrameLease(this);
        }

        internal void Leave()
        {
            if (gate.Leave()) Free();
        }

        internal IntPtr Ptr { get { return msg; } }

        /// <summary>The body as UTF-8 text.</summary>
        public override string ToString() { return IsDisposed ? "ZFrame(disposed)" : ReadString(); }
    }

    /// <summary>Holds a frame's gate for the span of one native call.</summary>
    internal struct FrameLease : IDisposable
    {
        readonly ZFrame f;

        internal FrameLease(ZFrame f) { this.f = f; }

        internal IntPtr Ptr { get { return f.Ptr; } }

        public void Dispose() { f.Leave(); }
    }

    /// <summary>
    /// A multi-part message: a list of <see cref="ZFrame"/>s that it owns. Disposing it disposes
    /// its frames; <see cref="ZSocket.SendMessage"/> sends them all and disposes it.
    /// </summary>
    public sealed class ZMessage : IList<ZFrame>, IDisposable
    {
        readonly List<ZFrame> frames = new List<ZFrame>();

        /// <summary>An empty message.</summary>
        public ZMessage() { }

        /// <summary>A message owning <paramref name="frames"/>.</summary>
        public ZMessage(IEnumerable<ZFrame> frames)
        {
            if (frames == null) throw new ArgumentNullException("frames");
            foreach (var f in frames) Add(f);
        }

        /// <summary>The frame at <paramref name="index"/>.</summary>
        public ZFrame this[int index]
        {
            get { return frames[index]; }
            set { frames[index] = value ?? throw new ArgumentNullException("value"); }
        }

        /// <summary>Number of frames.</summary>
        public int Count { get { return frames.Count; } }

        /// <summary>False.</summary>
        public bool IsReadOnly { get { return false; } }

        /// <summary>Appends a frame (the message takes ownership).</summary>
        public void Add(ZFrame frame) { frames.Add(frame ?? throw new ArgumentNullException("frame")); }

        /// <summary>Appends a UTF-8 text frame.</summary>
        public void Add(string text) { Add(new ZFrame(text)); }

        /// <summary>Appends a frame with a copy of <paramref name="data"/>.</summary>
        public void Add(byte[] data) { Add(new ZFrame(data)); }

        /// <summary>Inserts a frame (the message takes ownership).</summary>
        public void Insert(int index, ZFrame frame) { frames.Insert(index, frame ?? throw new ArgumentNullException("frame")); }

        /// <summary>Removes a frame without disposing it (ownership returns to the caller).</summary>
        public bool Remove(ZFrame frame) { return frames.Remove(frame); }

        /// <summary>Removes the frame at <paramref name="index"/> without disposing it.</summary>
        public void RemoveAt(int index) { frames.RemoveAt(index); }

        /// <summary>Disposes and removes every frame.</summary>
        public void Clear()
        {
            foreach (var f in frames) f.Dispose();
            frames.Clear();
        }

        /// <summary>Whether the message holds <paramref name="frame"/>.</summary>
        public bool Contains(ZFrame frame) { return frames.Contains(frame); }
        /// <summary>Index of <paramref name="frame"/>, or -1.</summary>
        public int IndexOf(ZFrame frame) { return frames.IndexOf(frame); }
        /// <summary>Copies the frame references into an array.</summary>
        public void CopyTo(ZFrame[] array, int arrayIndex) { frames.CopyTo(array, arrayIndex); }
        /// <summary>Enumerates the frames.</summary>
        public IEnumerator<ZFrame> GetEnumerator() { return frames.GetEnumerator(); }
        IEnumerator IEnumerable.GetEnumerator() { return frames.GetEnumerator(); }

        /// <summary>Disposes every frame. Idempotent.</summary>
        public void Dispose() { Clear(); }
    }
}
