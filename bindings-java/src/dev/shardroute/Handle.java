package dev.shardroute;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.util.function.Consumer;

/**
 * A native handle: {@link #close()} frees it once (a second close does nothing); a
 * {@link Cleaner} frees a handle nobody closed. After close, a call passes NULL and the ABI
 * answers {@code invalid_argument}. Closing a handle while another thread uses it is a bug of
 * the caller.
 */
abstract class Handle implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  private static final class State implements Runnable {
    private volatile Pointer pointer;
    private final Consumer<Pointer> free;

    State(Pointer pointer, Consumer<Pointer> free) {
      this.pointer = pointer;
      this.free = free;
    }

    @Override
    public synchronized void run() {
      Pointer p = pointer;
      pointer = null;
      if (p != null) free.accept(p);
    }

    Pointer get() {
      return pointer;
    }
  }

  private final State state;
  private final Cleaner.Cleanable cleanable;

  Handle(Pointer pointer, Consumer<Pointer> free) {
    state = new State(pointer, free);
    cleanable = CLEANER.register(this, state);
  }

  /** The native pointer, or null once closed. */
  final Pointer ptr() {
    return state.get();
  }

  /** Frees the native handle; idempotent. */
  @Override
  public void close() {
    cleanable.clean();
  }
}
