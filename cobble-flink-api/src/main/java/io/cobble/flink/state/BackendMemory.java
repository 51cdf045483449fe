package io.cobble.flink.state;

import static io.cobble.flink.state.CobbleStateBackendOptions.MEMORY_FIXED_PER_SLOT;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMORY_MANAGED;

import io.cobble.Config;
import io.cobble.MemoryPool;
import javax.annotation.Nullable;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.apache.flink.util.FlinkRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory of one keyed backend: a share of the one {@link MemoryPool} (block cache and memtable
 * budget) that every Cobble backend of the slot uses together, as Flink's RocksDB backend shares
 * one block cache and write buffer manager per slot.
 *
 * <p>The slot is the {@link MemoryManager} Flink gives each backend: a TaskManager has one per
 * slot. By default the pool is the state-backend share of the slot's managed memory, reserved as
 * one shared resource: the first backend of the slot reserves it and builds the pool, the last one
 * to close releases it. {@code memory.fixed-per-slot} sizes the pool instead and reserves nothing;
 * it is shared through the same memory manager as an external resource. Without a memory manager a
 * fixed budget makes a pool of the backend's own; with {@code memory.managed} false and no fixed
 * budget each backend sizes its own 128 MB, as before.
 */
public final class BackendMemory implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BackendMemory.class);

  /** The slot-wide resource all Cobble backends of a slot share (one reservation per slot). */
  static final String MANAGED_RESOURCE_ID = "state.backend.cobble.managed-memory";

  /** The slot-wide pool of {@code memory.fixed-per-slot}, outside managed memory. */
  static final String FIXED_RESOURCE_ID = "state.backend.cobble.fixed-memory";

  private final long budgetBytes;
  private final boolean managed;
  @Nullable private final MemoryPool pool;
  @Nullable private final OpaqueMemoryResource<SlotShare> lease;
  private boolean closed;

  private BackendMemory(
      long budgetBytes,
      boolean managed,
      @Nullable MemoryPool pool,
      @Nullable OpaqueMemoryResource<SlotShare> lease) {
    this.budgetBytes = budgetBytes;
    this.managed = managed;
    this.pool = pool;
    this.lease = lease;
  }

  /**
   * The memory {@code settings} give a backend whose operator holds {@code managedMemoryFraction}
   * of the slot's managed memory, reserving that memory when it is managed.
   *
   * @throws IllegalConfigurationException when managed memory is used and the slot has none, or the
   *     budget is too small for the memtables the settings ask for
   */
  public static BackendMemory reserve(
      CobbleStateSettings settings,
      @Nullable MemoryManager memoryManager,
      double managedMemoryFraction) {
    return reserve(
        settings, memoryManager, managedMemoryFraction, HeapShare.ofThisJvm(settings.taskSlots()));
  }

  /**
   * As {@link #reserve(CobbleStateSettings, MemoryManager, double)}, with the pool held to {@code
   * heap}'s share per slot: a fixed budget above it is an error, a managed share above it is
   * reserved whole but builds a pool of the heap's share (with a warning naming the way to more).
   */
  static BackendMemory reserve(
      CobbleStateSettings settings,
      @Nullable MemoryManager memoryManager,
      double managedMemoryFraction,
      HeapShare heap) {
    long fixed = settings.fixedPerSlotBytes();
    if (fixed > 0) {
      if (fixed > heap.perSlotBytes()) {
        throw new IllegalConfigurationException(
            MEMORY_FIXED_PER_SLOT.key()
                + " = "
                + HeapShare.mib(fixed)
                + " is more than a slot may keep on this TaskManager's heap. "
                + heap.explain()
                + ". Lower "
                + MEMORY_FIXED_PER_SLOT.key()
                + ", or raise taskmanager.memory.task.heap.size.");
      }
      settings.engineConfig(fixed); // throws the error naming the options to change
      if (memoryManager == null) {
        return new BackendMemory(fixed, false, pool(settings, fixed), null);
      }
      OpaqueMemoryResource<SlotShare> lease;
      try {
        lease =
            memoryManager.getExternalSharedMemoryResource(
                FIXED_RESOURCE_ID, bytes -> new SlotShare(pool(settings, bytes)), fixed);
      } catch (Exception e) {
        throw new FlinkRuntimeException(
            "Could not set up the slot's Cobble memory pool of "
                + MEMORY_FIXED_PER_SLOT.key()
                + " = "
                + fixed
                + " bytes",
            e);
      }
      return new BackendMemory(lease.getSize(), false, lease.getResourceHandle().pool, lease);
    }
    if (!settings.memoryManaged()) {
      return new BackendMemory(settings.memoryBudget(0), false, null, null);
    }
    long share =
        memoryManager == null || managedMemoryFraction <= 0
            ? 0
            : memoryManager.computeMemorySize(managedMemoryFraction);
    if (share <= 0) {
      settings.memoryBudget(0); // throws the error naming the options to set
    }
    long budget = Math.min(share, heap.perSlotBytes());
    try {
      settings.engineConfig(budget); // throws the error naming the options to change
    } catch (IllegalConfigurationException e) {
      if (budget == share) {
        throw e;
      }
      throw new IllegalConfigurationException(
          e.getMessage()
              + " The budget is the heap's share, not the slot's "
              + HeapShare.mib(share)
              + " of managed memory: "
              + heap.explain()
              + ". Raise taskmanager.memory.task.heap.size.",
          e);
    }
    OpaqueMemoryResource<SlotShare> lease;
    try {
      lease =
          memoryManager.getSharedMemoryResourceForManagedMemory(
              MANAGED_RESOURCE_ID,
              bytes -> new SlotShare(pool(settings, heapBounded(bytes, heap))),
              managedMemoryFraction);
    } catch (Exception e) {
      throw new FlinkRuntimeException(
          "Could not reserve "
              + share
              + " bytes of managed memory for the Cobble state backend; lower the slot's other"
              + " managed memory users, or set "
              + MEMORY_FIXED_PER_SLOT.key()
              + " (or "
              + MEMORY_MANAGED.key()
              + ": false) to run outside managed memory.",
          e);
    }
    MemoryPool pool = lease.getResourceHandle().pool;
    return new BackendMemory(pool.writeBufferBytes() + pool.blockCacheBytes(), true, pool, lease);
  }

  /** The slot's managed share, or the heap's share per slot when that is smaller (logged). */
  private static long heapBounded(long managedBytes, HeapShare heap) {
    long bytes = Math.min(managedBytes, heap.perSlotBytes());
    if (bytes < managedBytes) {
      LOG.warn(
          "The Cobble state backend uses {} of the slot's {} of managed memory for state. {}. To"
              + " give Cobble more, move memory from managed memory to the task heap"
              + " (taskmanager.memory.managed.size or .fraction down,"
              + " taskmanager.memory.task.heap.size up).",
          HeapShare.mib(bytes),
          HeapShare.mib(managedBytes),
          heap.explain());
    }
    return bytes;
  }

  /**
   * The slot's pool of {@code bytes}, split once by {@code memory.memtable-buffer-ratio} and {@code
   * memory.memtable-buffer-count} as a single backend's budget would be.
   */
  private static MemoryPool pool(CobbleStateSettings settings, long bytes) {
    Config split = settings.engineConfig(bytes);
    return new MemoryPool(
        split.memtableCapacity() * split.memtableBufferCount(), split.blockCacheSize());
  }

  /**
   * The engine configuration of the backend's Db: memtables sized from the budget as for a single
   * backend, and, with a pool, the pool's cache and memtable budget shared with the slot's other
   * backends.
   */
  public Config engineConfig(CobbleStateSettings settings) {
    Config own = settings.engineConfig(budgetBytes);
    return pool == null ? own : own.toBuilder().memoryPool(pool).build();
  }

  /**
   * Bytes the backend's pool holds for memtables and block cache together (per slot when shared).
   */
  public long budgetBytes() {
    return budgetBytes;
  }

  /** Whether the budget is reserved from Flink's managed memory. */
  public boolean managed() {
    return managed;
  }

  /** The pool the backend shares with the slot's other backends; null when it sizes its own. */
  @Nullable
  public MemoryPool pool() {
    return pool;
  }

  /** Gives the lease back; the slot's pool is released when its last lease is closed. */
  @Override
  public synchronized void close() {
    if (closed || lease == null) {
      closed = true;
      return;
    }
    closed = true;
    try {
      lease.close();
    } catch (Exception e) {
      throw new FlinkRuntimeException("Could not release the Cobble backend's memory", e);
    }
  }

  /**
   * The slot's pool; nothing to free on close (the pool is heap the Dbs let go of when they close,
   * and the memory manager tracks the reservation).
   */
  static final class SlotShare implements AutoCloseable {
    final MemoryPool pool;

    SlotShare(MemoryPool pool) {
      this.pool = pool;
    }

    @Override
    public void close() {}
  }
}
