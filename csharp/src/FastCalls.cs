// FastCalls: the per-message native calls without P/Invoke's GC transition, on Mono.
//
// Under Mono's default (hybrid) thread suspend every P/Invoke enters and leaves a GC-safe
// region; that transition costs several times what oxmq spends receiving a small message.
// Mono lets an embedder register a function as a *raw* internal call, which managed code
// calls directly, with the thread still in GC-unsafe mode. A thread in such a call cannot be
// suspended for a collection, so the contract here is strict:
//
//   * only calls that never wait go this way: every call carries ZMQ_DONTWAIT;
//   * a call that cannot proceed (any -1) is repeated by the caller through the P/Invoke in
//     Native, with the caller's own flags: that one may wait, and it alone reports errno
//     (errno is not read after a raw call, where the runtime could have clobbered it);
//   * a failed non-blocking zmq_recv/zmq_send/zmq_msg_recv/zmq_msg_send has no effect, so
//     repeating it is safe;
//   * a frame's own calls (zmq_msg_init, _close, _data, _size, _more) never wait and cannot
//     fail on a valid message; they go through MsgCalls, which picks the raw call or the
//     P/Invoke.
//
// Elsewhere (.NET, a Mono without mono_dangerous_add_raw_internal_call, or OXMQ_CS_FASTCALLS=0)
// Enabled stays false and the extern methods below are never called, nor compiled into any
// method that runs (Mono complains loudly when it compiles a call to an unregistered internal
// call): callers test Enabled and make the raw calls in methods of their own, which Mono does
// not inline (they have a finally block, or say NoInlining).

using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace ZeroMQ
{
    internal static unsafe class FastCalls
    {
        /// <summary>True once the raw calls are registered; read on every message.</summary>
        internal static bool Enabled;

        // `len` is a size_t passed as a pointer-sized value: converting an int to void* is one
        // instruction, to UIntPtr a call on Mono.
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_recv(IntPtr s, byte* buf, void* len, int flags);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_send(IntPtr s, byte* buf, void* len, int flags);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_msg_recv(IntPtr msg, IntPtr s, int flags);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_msg_send(IntPtr msg, IntPtr s, int flags);
        // A frame's own calls: none of them waits (zmq_msg_close frees a body, no more).
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_msg_init(IntPtr msg);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_msg_close(IntPtr msg);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern void* zmq_msg_data(IntPtr msg);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern void* zmq_msg_size(IntPtr msg);
        [MethodImpl(MethodImplOptions.InternalCall)]
        internal static extern int zmq_msg_more(IntPtr msg);

        const int RTLD_NOW = 2;
        const int RTLD_NOLOAD = 4;

        [DllImport("libdl.so.2")] static extern IntPtr dlopen(string file, int mode);
        [DllImport("libdl.so.2")] static extern IntPtr dlsym(IntPtr handle, string symbol);
        [DllImport("__Internal")] static extern void mono_dangerous_add_raw_internal_call(string name, IntPtr method);

        static readonly string[] Names = {
            "zmq_recv", "zmq_send", "zmq_msg_recv", "zmq_msg_send",
            "zmq_msg_init", "zmq_msg_close", "zmq_msg_data", "zmq_msg_size", "zmq_msg_more",
        };

        /// <summary>
        /// Registers the raw calls against the libzmq that the P/Invokes bound to. Called once by
        /// <see cref="LibraryLoader.Ensure"/>, before any method using them is compiled; leaves
        /// <see cref="Enabled"/> false where the runtime or the library does not allow it.
        /// </summary>
        internal static void Register(string preloadedPath)
        {
            if (Environment.GetEnvironmentVariable("OXMQ_CS_FASTCALLS") == "0") return;
            if (Type.GetType("Mono.Runtime") == null) return;
            try
            {
                BindNative();
                // The library the P/Invokes loaded: by the path preloaded, else by its soname.
                IntPtr lib = dlopen(preloadedPath ?? Native.Lib, RTLD_NOW | RTLD_NOLOAD);
                if (lib == IntPtr.Zero) return;
                var fns = new IntPtr[Names.Length];
                for (int i = 0; i < Names.Length; i++)
                {
                    fns[i] = dlsym(lib, Names[i]);
                    if (fns[i] == IntPtr.Zero) return;
                }
                for (int i = 0; i < Names.Length; i++)
                    mono_dangerous_add_raw_internal_call("ZeroMQ.FastCalls::" + Names[i], fns[i]);
                Enabled = true;
            }
            catch (DllNotFoundException) { }
            catch (EntryPointNotFoundException) { }
        }

        // Makes the runtime load libzmq for the P/Invokes (in a method compiled after the
        // preload, see LibraryLoader) so dlopen(RTLD_NOLOAD) finds that very library.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void BindNative()
        {
            int major, minor, patch;
            Native.zmq_version(out major, out minor, out patch);
        }
    }

    /// <summary>
    /// A frame's calls (<c>zmq_msg_init</c>, <c>_close</c>, <c>_data</c>, <c>_size</c>,
    /// <c>_more</c>): raw calls where <see cref="FastCalls.Enabled"/>, else the P/Invokes. Each
    /// raw call sits in a method of its own that Mono does not inline (see FastCalls).
    /// </summary>
    internal static unsafe class MsgCalls
    {
        internal static void Init(IntPtr m) { if (FastCalls.Enabled) InitRaw(m); else Native.zmq_msg_init(m); }
        internal static void Close(IntPtr m) { if (FastCalls.Enabled) CloseRaw(m); else Native.zmq_msg_close(m); }
        internal static IntPtr Data(IntPtr m) { return FastCalls.Enabled ? DataRaw(m) : Native.zmq_msg_data(m); }
        internal static long LongSize(IntPtr m) { return (long)(FastCalls.Enabled ? SizeRaw(m) : (ulong)Native.zmq_msg_size(m)); }
        // The size as an int, for the members that take or return one; a frame over 2 GiB is
        // refused rather than cut.
        internal static int Size(IntPtr m)
        {
            long n = LongSize(m);
            if (n > int.MaxValue) throw TooLarge(n);
            return (int)n;
        }
        [MethodImpl(MethodImplOptions.NoInlining)]
        static OverflowException TooLarge(long n)
        {
            return new OverflowException("a frame of " + n + " bytes: use ZFrame.LongLength, and AsSpan(start, length) for a part of it");
        }
        internal static bool More(IntPtr m) { return (FastCalls.Enabled ? MoreRaw(m) : Native.zmq_msg_more(m)) != 0; }

        [MethodImpl(MethodImplOptions.NoInlining)] static void InitRaw(IntPtr m) { FastCalls.zmq_msg_init(m); }
        [MethodImpl(MethodImplOptions.NoInlining)] static void CloseRaw(IntPtr m) { FastCalls.zmq_msg_close(m); }
        [MethodImpl(MethodImplOptions.NoInlining)] static IntPtr DataRaw(IntPtr m) { return (IntPtr)FastCalls.zmq_msg_data(m); }
        [MethodImpl(MethodImplOptions.NoInlining)] static ulong SizeRaw(IntPtr m) { return (ulong)FastCalls.zmq_msg_size(m); }
        [MethodImpl(MethodImplOptions.NoInlining)] static int MoreRaw(IntPtr m) { return FastCalls.zmq_msg_more(m); }
    }
}
