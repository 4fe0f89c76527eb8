package dev.shardroute;

import com.sun.jna.Pointer;

/** A command begun on a {@link ClusterSession} ({@code sr_command}); close it when done. */
public final class Command extends Handle {
  private final int slot;

  Command(Pointer pointer, int slot) {
    super(pointer, Ffi.LIB::sr_command_free);
    this.slot = slot;
  }

  /** The hash slot of the command's keys. */
  public int slot() {
    return slot;
  }
}
