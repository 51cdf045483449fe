package io.cobble.flink.state;

import static io.cobble.flink.state.CobbleStateBackendOptions.MEMORY_FIXED_PER_SLOT;
import static io.cobble.flink.state.CobbleStateBackendOptions.MEMORY_MANAGED;

import javax.annotation.Nullable;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * The memory budget of one keyed backend, and the managed memory reserved for it. As Flink's
 * RocksDB backend does, the budget is the state-backend share of the slot's managed memory,
 * reserved from the slot's {@link MemoryManager} as one resource shared by every Cobble backend of
 * the slot: the first backend reserves it, the last one to close releases it. {@code
 * memory.fixed-per-slot} replaces the share and reserves nothing; with {@code memory.managed} false
 * the budget is a fixed 128 MB.
 */
public final class BackendMemory implements AutoCloseable {

  /** The slot-wide resource all Cobble backends of a slot share (one reservation per slot). */
  static final String MANAGED_RESOURCE_ID = "state.backend.cobble.managed-memory";

  private final long budgetBytes;
  @Nullable private final OpaqueMemoryResource<SlotShare> lease;
  private boolean closed;

  private BackendMemory(long budgetBytes, @Nullable OpaqueMemoryResource<SlotShare> lease) {
    this.budgetBytes = budgetBytes;
    this.lease = lease;
  }

  /**
   * The budget {@code settings} give a backend whose operator holds {@code managedMemoryFraction}
   * of the slot's managed memory, reserving that memory when it is managed.
   *
   * @throws IllegalConfigurationException when managed memory is used and the slot has none
   */
  public static BackendMemory reserve(
      CobbleStateSettings settings,
      @Nullable MemoryManager memoryManager,
      double managedMemoryFraction) {
    if (settings.fixedPerSlotBytes() > 0 || !settings.memoryManaged()) {
      return new BackendMemory(settings.memoryBudget(0), null);
    }
    long share =
        memoryManager == null || managedMemoryFraction <= 0
            ? 0
            : memoryManager.computeMemorySize(managedMemoryFraction);
    if (share <= 0) {
      settings.memoryBudget(0); // throws the error naming the options to set
    }
    OpaqueMemoryResource<SlotShare> lease;
    try {
      lease =
          memoryManager.getSharedMemoryResourceForManagedMemory(
              MANAGED_RESOURCE_ID, SlotShare::new, managedMemoryFraction);
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
    return new BackendMemory(lease.getSize(), lease);
  }

  /** Bytes the backend may use for memtables and block cache together. */
  public long budgetBytes() {
    return budgetBytes;
  }

  /** Whether the budget is reserved from Flink's managed memory. */
  public boolean managed() {
    return lease != null;
  }

  /** Gives the lease back; the slot's reservation is released when its last lease is closed. */
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
      throw new FlinkRuntimeException("Could not release the Cobble backend's managed memory", e);
    }
  }

  /** The slot's reserved share; nothing to free, the memory manager tracks the reservation. */
  static final class SlotShare implements AutoCloseable {
    final long bytes;

    SlotShare(long bytes) {
      this.bytes = bytes;
    }

    @Override
    public void close() {}
  }
}
