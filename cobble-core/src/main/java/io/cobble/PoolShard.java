package io.cobble;

import io.cobble.version.Version;

/** A Db as a member of a {@link MemoryPool}: what the pool may ask of its shard and flusher. */
final class PoolShard implements MemoryPool.Shard {
  private final ShardState state;
  private final Flusher flusher;

  PoolShard(ShardState state, Flusher flusher) {
    this.state = state;
    this.flusher = flusher;
  }

  @Override
  public Version current() {
    return state.versions.current();
  }

  @Override
  public void rotateIfRoom() {
    flusher.rotateIfRoom();
  }

  @Override
  public void rotateOnFlushThread(Runnable started) {
    flusher.execute(
        () -> {
          started.run();
          state.mutex.lock();
          try {
            if (!state.closed()) {
              flusher.rotateIfRoom();
            }
          } finally {
            state.mutex.unlock();
          }
        });
  }

  @Override
  public void wakeWriters() {
    if (state.mutex.tryLock()) {
      try {
        state.changed.signalAll();
      } finally {
        state.mutex.unlock();
      }
    }
  }
}
