package io.oxmq.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Linux's {@code membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)}: when {@link #run()} returns,
 * every other thread of the process that was running has executed a full memory barrier. This
 * lets {@link Guard} keep fences off its frequent side. {@link #AVAILABLE} is false on other
 * systems, on architectures whose system call number is not known here, and where the call is
 * refused (old kernels, seccomp filters); the guard then fences on both sides.
 */
final class Membarrier {
    private Membarrier() {}

    private static final int CMD_PRIVATE_EXPEDITED = 1 << 3;
    private static final int CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4;

    private static final MethodHandle SYSCALL;
    private static final long NR;
    static final boolean AVAILABLE;

    static {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        long nr = !os.contains("linux") ? -1 : switch (arch) {
            case "amd64", "x86_64" -> 324;
            case "aarch64", "riscv64" -> 283;
            default -> -1;
        };
        MethodHandle h = null;
        boolean ok = false;
        if (nr > 0 && !Boolean.getBoolean("oxmq.noMembarrier")) {
            Linker linker = Linker.nativeLinker();
            h = linker.defaultLookup().find("syscall").map(sym -> linker.downcallHandle(sym,
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                    Linker.Option.firstVariadicArg(1))).orElse(null);
            ok = h != null && call(h, nr, CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
        }
        SYSCALL = h;
        NR = nr;
        AVAILABLE = ok;
    }

    private static long call(MethodHandle h, long nr, int cmd) {
        try {
            return (long) h.invokeExact(nr, (long) cmd, 0L, 0L);
        } catch (Throwable t) {
            return -1;
        }
    }

    /** Makes every running thread of the process pass a full barrier. */
    static void run() {
        if (call(SYSCALL, NR, CMD_PRIVATE_EXPEDITED) != 0) {
            // Registered at start-up, so the kernel does not refuse this; if it ever did, going
            // on would leave the guard unsound.
            throw new IllegalStateException("oxmq: membarrier failed after registration");
        }
    }
}
