package guide;

import org.zeromq.ZContext;

/** Runs a guide program in its own process (used by the interop tests against JeroMQ):
 *  {@code hwserver <endpoint> <n>} prints "BOUND <endpoint>" then serves n requests;
 *  {@code tour} prints what {@link ApiTour} finds; {@code peer key=value...} runs {@link SecurePeer}, prints "READY <endpoint>" once bound or
 *  connected and "RESULT <result>" at the end, and exits 0 only when the result is OK. */
public class Run {
    public static void main(String[] args) throws Exception {
        int status = 0;
        try (ZContext ctx = new ZContext()) {
            switch (args[0]) {
                case "hwserver":
                    HwServer.run(ctx, args[1], Integer.parseInt(args[2]), ep -> {
                        System.out.println("BOUND " + ep);
                        System.out.flush();
                    });
                    break;
                case "hwclient":
                    for (String r : HwClient.run(ctx, args[1], Integer.parseInt(args[2]))) System.out.println(r);
                    break;
                case "peer": {
                    String result = SecurePeer.run(ctx, SecurePeer.parse(args, 1), ep -> {
                        System.out.println("READY " + ep);
                        System.out.flush();
                    });
                    System.out.println("RESULT " + result);
                    status = result.equals("OK") ? 0 : 3;
                    break;
                }
                case "tour":
                    for (String line : ApiTour.all(ctx)) System.out.println(line);
                    break;
                default:
                    throw new IllegalArgumentException(args[0]);
            }
        }
        System.exit(status);
    }
}
