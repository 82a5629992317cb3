// The P/Invoke surface of the binding: every native entry point of libzmq.so.5 that the binding
// calls, in one internal class, plus the choice of which libzmq.so.5 is loaded.
//
// All socket and message pointers are passed as IntPtr; the public classes keep them in
// SafeHandles and hold a reference on the handle for the duration of each call, so a Dispose
// racing a call on another thread defers the close until the call returns instead of freeing
// memory under it. Calls that can fail set SetLastError so errno is captured by the marshaller
// right after the call returns (a separate zmq_errno call could see errno clobbered by the
// runtime's own transitions in between).

using System;
using System.IO;
using System.Runtime.InteropServices;

namespace ZeroMQ
{
    internal static unsafe class Native
    {
        internal const string Lib = "libzmq.so.5";

        internal const int ZMQ_DONTWAIT = 1;
        internal const int ZMQ_SNDMORE = 2;
        internal const int ZMQ_MORE = 1;
        internal const int ZMQ_IO_THREADS = 1;
        internal const int ZMQ_MAX_SOCKETS = 2;
        internal const int MsgSize = 64; // sizeof(zmq_msg_t) from libzmq 4.1 on, and oxmq's

        // ---- context
        [DllImport(Lib, SetLastError = true)] internal static extern IntPtr zmq_ctx_new();
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_ctx_term(IntPtr ctx);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_ctx_shutdown(IntPtr ctx);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_ctx_set(IntPtr ctx, int option, int value);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_ctx_get(IntPtr ctx, int option);
        // oxmq only: EntryPointNotFoundException on another libzmq.
        [DllImport(Lib, SetLastError = true)] internal static extern int oxmq_ctx_metrics(IntPtr ctx, byte* buf, UIntPtr size, int timeoutMs);

        // ---- sockets
        [DllImport(Lib, SetLastError = true)] internal static extern IntPtr zmq_socket(IntPtr ctx, int type);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_close(IntPtr s);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_bind(IntPtr s, byte* endpoint);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_unbind(IntPtr s, byte* endpoint);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_connect(IntPtr s, byte* endpoint);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_disconnect(IntPtr s, byte* endpoint);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_setsockopt(IntPtr s, int option, void* value, UIntPtr len);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_getsockopt(IntPtr s, int option, void* value, UIntPtr* len);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_send(IntPtr s, void* buf, UIntPtr len, int flags);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_recv(IntPtr s, void* buf, UIntPtr len, int flags);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_socket_monitor(IntPtr s, byte* endpoint, int events);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_poll(PollItem* items, int count, long timeout);

        // ---- messages (zmq_msg_t is 64 bytes of native memory owned by a ZFrame)
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_init(IntPtr msg);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_init_size(IntPtr msg, UIntPtr size);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_close(IntPtr msg);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_copy(IntPtr dest, IntPtr src);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_send(IntPtr msg, IntPtr s, int flags);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_recv(IntPtr msg, IntPtr s, int flags);
        [DllImport(Lib)] internal static extern IntPtr zmq_msg_data(IntPtr msg);
        [DllImport(Lib)] internal static extern UIntPtr zmq_msg_size(IntPtr msg);
        [DllImport(Lib)] internal static extern int zmq_msg_more(IntPtr msg);
        [DllImport(Lib, SetLastError = true)] internal static extern byte* zmq_msg_gets(IntPtr msg, byte* property);

        // ---- draft API (libzmq's ZMQ_BUILD_DRAFT_API): routing ids, groups, PEER's connect
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_set_routing_id(IntPtr msg, uint routingId);
        [DllImport(Lib)] internal static extern uint zmq_msg_routing_id(IntPtr msg);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_msg_set_group(IntPtr msg, byte* group);
        [DllImport(Lib)] internal static extern byte* zmq_msg_group(IntPtr msg);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_join(IntPtr s, byte* group);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_leave(IntPtr s, byte* group);
        [DllImport(Lib, SetLastError = true)] internal static extern uint zmq_connect_peer(IntPtr s, byte* endpoint);

        // ---- misc
        [DllImport(Lib)] internal static extern void zmq_version(out int major, out int minor, out int patch);
        [DllImport(Lib)] internal static extern IntPtr zmq_strerror(int errnum);
        [DllImport(Lib)] internal static extern int zmq_has(byte* capability);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_curve_keypair(byte* publicKey, byte* secretKey);
        [DllImport(Lib, SetLastError = true)] internal static extern int zmq_curve_public(byte* publicKey, byte* secretKey);
        [DllImport(Lib)] internal static extern byte* zmq_z85_encode(byte* dest, byte* data, UIntPtr size);
        [DllImport(Lib)] internal static extern byte* zmq_z85_decode(byte* dest, byte* str);

        /// <summary>errno of the last native call on this thread that set it.</summary>
        internal static int LastErrno() { return Marshal.GetLastWin32Error(); }

        /// <summary>A NUL-terminated UTF-8 copy of <paramref name="s"/> for a native call.</summary>
        internal static byte[] Utf8z(string s, string paramName)
        {
            if (s == null) throw new ArgumentNullException(paramName);
            if (s.IndexOf('\0') >= 0) throw new ArgumentException("contains a NUL character", paramName);
            int n = System.Text.Encoding.UTF8.GetByteCount(s);
            var b = new byte[n + 1];
            System.Text.Encoding.UTF8.GetBytes(s, 0, s.Length, b, 0);
            return b;
        }

        /// <summary>zmq_pollitem_t on LP64 Unix: socket pointer, int fd, short events, short revents.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct PollItem
        {
            internal IntPtr Socket;
            internal int Fd;
            internal short Events;
            internal short Revents;
        }
    }

    /// <summary>
    /// Chooses which <c>libzmq.so.5</c> the <c>DllImport</c>s bind to. Mono binds a P/Invoke
    /// when it compiles the method that calls it, so <see cref="Ensure"/> must run before any
    /// method calling <see cref="Native"/> is compiled: every public entry point that can come
    /// first (the constructors of ZContext and ZFrame, the static members of ZContext, ZCurve and
    /// ZError.Text) calls <see cref="Ensure"/> and leaves its native calls to a non-inlined helper.
    /// Everything else needs a ZContext or ZFrame first. It loads the chosen file with
    /// <c>dlopen</c> before the first native call; the dynamic loader then answers the binding's
    /// own <c>dlopen("libzmq.so.5")</c> with that already loaded library (it matches the soname),
    /// on Mono and on .NET alike. Order:
    /// 1. <c>OXMQ_LIBZMQ</c>=<i>path</i> loads that file; <c>OXMQ_LIBZMQ=system</c> leaves the
    ///    choice to the loader (LD_LIBRARY_PATH, then the system's, e.g. Debian's libzmq 4.3.4).
    /// 2. Otherwise, when LD_LIBRARY_PATH is set, the loader's search (the user chose).
    /// 3. Otherwise <c>libzmq.so.5</c> beside the assembly, then oxmq's <c>dist/lib</c> two levels
    ///    up (the repository layout: <c>csharp/build/ZeroMQ.dll</c>, <c>dist/lib/libzmq.so.5</c>).
    /// 4. Otherwise the loader's search.
    /// </summary>
    internal static class LibraryLoader
    {
        const int RTLD_NOW = 2;
        const int RTLD_GLOBAL = 0x100;

        [DllImport("libdl.so.2")] static extern IntPtr dlopen(string file, int mode);
        [DllImport("libdl.so.2")] static extern IntPtr dlerror();

        static readonly object gate = new object();
        static volatile bool done;
        static string preloaded;

        /// <summary>The file preloaded (null: the loader's search decides).</summary>
        internal static string PreloadedPath { get { Ensure(); return preloaded; } }

        /// <summary>Makes the library choice once; later calls return at once.</summary>
        internal static void Ensure()
        {
            if (done) return;
            lock (gate)
            {
                if (done) return;
                preloaded = Preload();
                FastCalls.Register(preloaded);
                done = true;
            }
        }

        static string Preload()
        {
            string path = Choose();
            if (path == null) return null;
            if (dlopen(path, RTLD_NOW | RTLD_GLOBAL) == IntPtr.Zero)
            {
                IntPtr e = dlerror();
                string why = e == IntPtr.Zero ? "unknown error" : Marshal.PtrToStringAnsi(e);
                throw new DllNotFoundException("oxmq binding: cannot load " + path + ": " + why);
            }
            return path;
        }

        static string Choose()
        {
            string env = Environment.GetEnvironmentVariable("OXMQ_LIBZMQ");
            if (!string.IsNullOrEmpty(env))
                return env == "system" ? null : Path.GetFullPath(env);
            if (!string.IsNullOrEmpty(Environment.GetEnvironmentVariable("LD_LIBRARY_PATH")))
                return null;
            string loc = typeof(LibraryLoader).Assembly.Location;
            if (string.IsNullOrEmpty(loc)) return null;
            string dir = Path.GetDirectoryName(Path.GetFullPath(loc));
            foreach (string cand in new[] {
                Path.Combine(dir, Native.Lib),
                Path.Combine(dir, "..", "..", "dist", "lib", Native.Lib) })
            {
                if (File.Exists(cand)) return Path.GetFullPath(cand);
            }
            return null;
        }
    }
}
