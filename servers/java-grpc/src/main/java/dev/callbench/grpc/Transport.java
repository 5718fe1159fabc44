package dev.callbench.grpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.IoHandlerFactory;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The Netty threads, sized by {@code --workers N}: one boss thread accepts connections, N event-loop threads
 * do the I/O, HTTP/2 and the calls themselves (grpc-java's direct executor, see README.md). grpc-java's
 * defaults would be 2 x cores event loops and an unbounded cached pool for the calls. epoll as grpc-java
 * itself picks it when the native transport loads, else NIO.
 */
final class Transport {
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Class<? extends ServerChannel> channelType;

    private Transport(EventLoopGroup boss, EventLoopGroup workers, Class<? extends ServerChannel> channelType) {
        this.boss = boss;
        this.workers = workers;
        this.channelType = channelType;
    }

    static Transport create(int workers) {
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new Transport(
                new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("grpc-boss", true), io),
                new MultiThreadIoEventLoopGroup(workers, new DefaultThreadFactory("grpc-worker", true), io),
                epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class);
    }

    NettyServerBuilder serverBuilder(SocketAddress address) {
        return NettyServerBuilder.forAddress(address)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers)
                .channelType(channelType)
                // The workloads never block (per-request auth reads a file in the page cache), as in tonic.
                .directExecutor();
    }

    void close() {
        boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }
}
