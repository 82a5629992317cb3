/**
 * The ØMQ wiring API for Java: named exchanges and queues bound by name, found through a name
 * service, with the seed's {@code Jzmq} class. A thin shell over oxmq's C front end
 * ({@code czmq_*} in {@code libzmq.so.5}), reached through {@link io.oxmq.Zmq#symbols()}.
 */
module io.oxmq.wiring {
    requires transitive io.oxmq;
    exports io.oxmq.wiring;
}
