// ZContext: a ZeroMQ context, the owner of I/O threads and the factory of sockets.

using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace ZeroMQ
{
    /// <summary>
    /// A ZeroMQ context (<c>zmq_ctx_new</c>). Create one per process, share it between threads,
    /// and create sockets from it. Dispose it last.
    /// </summary>
    /// <remarks>
    /// <see cref="Dispose"/> never blocks on a socket the application still holds: if sockets are
    /// open it shuts the context down (their blocked and future calls throw
    /// <see cref="ZTerminatedException"/>) and the native context is terminated when the last
    /// of them is disposed. With no socket open it terminates at once, which waits for messages
    /// still lingering in closed sockets (as <c>zmq_ctx_term</c> does).
    ///
    /// When the process exits, contexts not yet disposed are shut down, so a thread blocked in a
    /// receive gets <see cref="ZTerminatedException"/> instead of holding up the exit (Mono waits
    /// for background threads that are inside native calls).
    /// </remarks>
    public sealed class ZContext : IDisposable
    {
        internal readonly ContextHandle Handle;
        int openSockets;
        int disposed;

        /// <summary>Creates a context.</summary>
        /// <exception cref="ZException">The native library could not create one.</exception>
        public ZContext()
        {
            LibraryLoader.Ensure();
            Handle = Open();
            lock (live)
            {
                if (!hooked)
                {
                    AppDomain.CurrentDomain.ProcessExit += ShutdownAllAtExit;
                    hooked = true;
                }
                if (live.Count >= 64) live.RemoveAll(w => !w.IsAlive);
                live.Add(self = new WeakReference(this));
            }
        }

        // Contexts not yet disposed, for the shutdown at process exit (weak: a context that is
        // no longer referenced is left to its finalizer).
        static readonly List<WeakReference> live = new List<WeakReference>();
        static bool hooked;
        readonly WeakReference self;

        static void ShutdownAllAtExit(object sender, EventArgs e)
        {
            WeakReference[] all;
            lock (live) all = live.ToArray();
            foreach (WeakReference w in all)
            {
                var c = w.Target as ZContext;
                if (c == null) continue;
                try { c.Shutdown(); }
                catch (ObjectDisposedException) { } // disposed meanwhile
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static ContextHandle Open()
        {
            IntPtr p = Native.zmq_ctx_new();
            if (p == IntPtr.Zero) throw ZException.For(ZError.GetLastErr(), "zmq_ctx_new");
            return new ContextHandle(p);
        }

        /// <summary>Creates a context (clrzmq4's factory name).</summary>
        public static ZContext Create() { return new ZContext(); }

        /// <summary>Number of I/O threads (<c>ZMQ_IO_THREADS</c>); set before creating sockets.</summary>
        public int ThreadPoolSize
        {
            get { return Get(Native.ZMQ_IO_THREADS); }
            set { Set(Native.ZMQ_IO_THREADS, value); }
        }

        /// <summary>Maximum number of sockets (<c>ZMQ_MAX_SOCKETS</c>).</summary>
        public int MaxSockets
        {
            get { return Get(Native.ZMQ_MAX_SOCKETS); }
            set { Set(Native.ZMQ_MAX_SOCKETS, value); }
        }

        /// <summary>
        /// oxmq only: every socket's counters in the Prometheus text format, as the <c>/metrics</c>
        /// endpoint that <c>OXMQ_METRICS_ADDR=HOST:PORT</c> in the environment makes the process
        /// serve, for an application that serves metrics itself. Waits up to 100 ms for the
        /// sockets to publish fresh counts (see <see cref="GetMetrics"/>).
        /// </summary>
        public string Metrics { get { return GetMetrics(TimeSpan.FromMilliseconds(100)); } }

        /// <summary>
        /// <see cref="Metrics"/>, waiting up to <paramref name="wait"/> (zero: not at all) for fresh
        /// counts: a socket publishes them at its thread's next call, or at once while that thread
        /// waits in a blocking call or a poll; one that has not is reported from its last
        /// publication. A thread that owns sockets itself passes zero.
        /// </summary>
        /// <exception cref="NotSupportedException">The loaded libzmq is not oxmq's.</exception>
        public unsafe string GetMetrics(TimeSpan wait)
        {
            int ms = (int)Math.Min(Math.Max(wait.TotalMilliseconds, 0), int.MaxValue);
            int size = 64 * 1024;
            using (var h = new HandleLease(Handle))
            {
                while (true)
                {
                    var buf = new byte[size];
                    int n;
                    try
                    {
                        fixed (byte* p = buf) n = Native.oxmq_ctx_metrics(h.Ptr, p, (UIntPtr)size, ms);
                    }
                    catch (EntryPointNotFoundException)
                    {
                        throw new NotSupportedException("metrics need oxmq's libzmq.so.5");
                    }
                    if (n < 0) throw ZException.For(ZError.GetLastErr(), "oxmq_ctx_metrics");
                    if (n < size) return System.Text.Encoding.UTF8.GetString(buf, 0, n);
                    size = n + 1; // it grew past the buffer: once more, at its size
                    ms = 0;
                }
            }
        }

        /// <summary>Sockets of this context not yet closed (disposed, or finalized if forgotten).</summary>
        public int OpenSocketCount { get { return Volatile.Read(ref openSockets); } }

        /// <summary>True once <see cref="Dispose"/> has been called.</summary>
        public bool IsDisposed { get { return Volatile.Read(ref disposed) != 0; } }

        /// <summary>
        /// Shuts the context down without terminating it (<c>zmq_ctx_shutdown</c>): every blocked
        /// call on its sockets returns and throws <see cref="ZTerminatedException"/>, and so do
        /// later calls; the sockets must still be disposed. Safe from any thread, idempotent.
        /// </summary>
        public void Shutdown()
        {
            if (IsDisposed) return;
            try
            {
                using (var h = new HandleLease(Handle))
                {
                    Native.zmq_ctx_shutdown(h.Ptr);
                }
            }
            catch (ObjectDisposedException)
            {
                // Disposed by another thread meanwhile: it is shut down already.
            }
        }

        /// <summary>
        /// Releases the context: terminates it now when no socket is open, otherwise shuts it down
        /// and leaves the termination to the disposal of its last socket. Idempotent.
        /// </summary>
        public void Dispose()
        {
            if (Interlocked.Exchange(ref disposed, 1) != 0) return;
            lock (live) live.Remove(self);
            if (Volatile.Read(ref openSockets) > 0)
            {
                using (var h = new HandleLease(Handle))
                {
                    Native.zmq_ctx_shutdown(h.Ptr);
                }
            }
            Handle.Dispose();
        }

        /// <summary>libzmq's version of the loaded native library (oxmq reports 4.3.5).</summary>
        public static Version Version
        {
            get
            {
                LibraryLoader.Ensure();
                return NativeVersion();
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Version NativeVersion()
        {
            int major, minor, patch;
            Native.zmq_version(out major, out minor, out patch);
            return new Version(major, minor, patch);
        }

        /// <summary>Whether the library has a capability (<c>zmq_has</c>): "ipc", "curve", "draft", ...</summary>
        public static bool Has(string capability)
        {
            LibraryLoader.Ensure();
            return NativeHas(Native.Utf8z(capability, "capability"));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static unsafe bool NativeHas(byte[] c)
        {
            fixed (byte* p = c) return Native.zmq_has(p) != 0;
        }

        /// <summary>The library file the binding was told to load (null when left to the loader's search).</summary>
        public static string LibraryPath
        {
            get { return LibraryLoader.PreloadedPath; }
        }

        internal void SocketOpened() { Interlocked.Increment(ref openSockets); }
        internal void SocketClosed() { Interlocked.Decrement(ref openSockets); }

        int Get(int option)
        {
            using (var h = Lease())
            {
                int v = Native.zmq_ctx_get(h.Ptr, option);
                if (v < 0) throw ZException.For(ZError.GetLastErr(), "zmq_ctx_get");
                return v;
            }
        }

        void Set(int option, int value)
        {
            using (var h = Lease())
            {
                if (Native.zmq_ctx_set(h.Ptr, option, value) != 0)
                    throw ZException.For(ZError.GetLastErr(), "zmq_ctx_set");
            }
        }

        internal HandleLease Lease()
        {
            if (IsDisposed) throw new ObjectDisposedException("ZContext");
            return new HandleLease(Handle);
        }
    }
}
