/**
 * JeroMQ's API ({@code org.zeromq}) on oxmq's Java binding. The module has JeroMQ's own module
 * name, so a modular program that {@code requires org.zeromq.jeromq} runs on oxmq by swapping
 * the jar alone. {@code io.oxmq} is read transitively: {@code ZMQ.Socket.oxmqSocket()} hands out
 * the binding's socket for what JeroMQ's API does not offer.
 */
module org.zeromq.jeromq {
    requires transitive io.oxmq;
    exports org.zeromq;
}
