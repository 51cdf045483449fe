package io.cobble.flink.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemoryPool;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.util.FlinkRuntimeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The backend's memory against a real {@link MemoryManager}: the managed share is reserved once per
 * slot and becomes one pool shared by the slot's backends, released when the last one closes; a
 * fixed budget is one pool per slot too, and reserves nothing, as unmanaged budgets do.
 */
class BackendMemoryTest {
  private static final long SLOT = 64L << 20;

  private final MemoryManager slot = MemoryManager.create(SLOT, MemoryManager.DEFAULT_PAGE_SIZE);

  @AfterEach
  void shutdown() {
    slot.shutdown();
  }

  @Test
  void managedShareIsReservedOncePerSlotAndReleasedByTheLastBackend() {
    BackendMemory first = BackendMemory.reserve(settings(), slot, 0.5);
    assertTrue(first.managed());
    assertEquals(SLOT / 2, first.budgetBytes());
    assertEquals(SLOT / 2, slot.availableMemory(), "the share is reserved from the slot");

    BackendMemory second = BackendMemory.reserve(settings(), slot, 0.5);
    assertEquals(SLOT / 2, second.budgetBytes());
    assertEquals(SLOT / 2, slot.availableMemory(), "a second backend shares the reservation");
    assertSame(first.pool(), second.pool(), "one pool per slot");
    MemoryPool pool = first.pool();
    // Split once for the slot: half for memtables (2 buffers of 8 MB), the rest for the cache.
    assertEquals(SLOT / 4, pool.writeBufferBytes());
    assertEquals(SLOT / 4, pool.blockCacheBytes());
    assertSame(pool, first.engineConfig(settings()).memoryPool());
    assertEquals(SLOT / 8, first.engineConfig(settings()).memtableCapacity());

    first.close();
    first.close();
    assertEquals(SLOT / 2, slot.availableMemory(), "still held by the second backend");
    second.close();
    assertEquals(SLOT, slot.availableMemory(), "released with the last lease");

    BackendMemory again = BackendMemory.reserve(settings(), slot, 0.25);
    assertEquals(SLOT / 4, again.budgetBytes());
    assertNotSame(pool, again.pool(), "a released slot share builds a new pool");
    assertEquals(SLOT - SLOT / 4, slot.availableMemory());
    again.close();
    assertEquals(SLOT, slot.availableMemory());
  }

  @Test
  void fixedPerSlotAndUnmanagedBudgetsReserveNothing() {
    BackendMemory fixed =
        BackendMemory.reserve(settings("memory.fixed-per-slot", "48mb"), slot, 0.5);
    assertFalse(fixed.managed());
    assertEquals(48L << 20, fixed.budgetBytes());
    assertEquals(SLOT, slot.availableMemory());
    BackendMemory fixedToo =
        BackendMemory.reserve(settings("memory.fixed-per-slot", "48mb"), slot, 0.5);
    assertSame(fixed.pool(), fixedToo.pool(), "the fixed budget is one pool per slot too");
    assertEquals(48L << 20, fixed.pool().writeBufferBytes() + fixed.pool().blockCacheBytes());
    MemoryManager otherSlot = MemoryManager.create(SLOT, MemoryManager.DEFAULT_PAGE_SIZE);
    try {
      BackendMemory elsewhere =
          BackendMemory.reserve(settings("memory.fixed-per-slot", "48mb"), otherSlot, 0.5);
      assertNotSame(fixed.pool(), elsewhere.pool(), "another slot has its own pool");
      elsewhere.close();
    } finally {
      otherSlot.shutdown();
    }
    fixed.close();
    fixedToo.close();

    BackendMemory unmanaged = BackendMemory.reserve(settings("memory.managed", "false"), slot, 0.5);
    assertFalse(unmanaged.managed());
    assertEquals(128L << 20, unmanaged.budgetBytes());
    assertNull(unmanaged.pool(), "each unmanaged backend sizes its own memory");
    assertEquals(SLOT, slot.availableMemory());
    unmanaged.close();

    // Without a memory manager (or share) a fixed budget still works, as a pool of its own.
    BackendMemory alone = BackendMemory.reserve(settings("memory.fixed-per-slot", "48mb"), null, 0);
    assertEquals(48L << 20, alone.budgetBytes());
    assertNotNull(alone.pool());
  }

  @Test
  void noManagedMemoryIsAClearError() {
    for (MemoryManager manager : new MemoryManager[] {null, slot}) {
      IllegalConfigurationException e =
          assertThrows(
              IllegalConfigurationException.class,
              () -> BackendMemory.reserve(settings(), manager, 0.0));
      assertTrue(
          e.getMessage().contains("got no managed memory (state.backend.cobble.memory.managed"),
          e.getMessage());
      assertTrue(e.getMessage().contains("state.backend.cobble.memory.fixed-per-slot"));
    }
    assertEquals(SLOT, slot.availableMemory());
  }

  @Test
  void aSlotWithoutFreeManagedMemoryFailsNamingTheWayOut() throws Exception {
    Object other = new Object();
    slot.reserveMemory(other, SLOT - (8L << 20));
    FlinkRuntimeException e =
        assertThrows(
            FlinkRuntimeException.class, () -> BackendMemory.reserve(settings(), slot, 0.5));
    assertTrue(
        e.getMessage()
            .startsWith(
                "Could not reserve 33554432 bytes of managed memory for the Cobble state backend"),
        e.getMessage());
    assertTrue(e.getMessage().contains("state.backend.cobble.memory.fixed-per-slot"));
    slot.releaseAllMemory(other);
    assertEquals(SLOT, slot.availableMemory(), "a failed reservation holds nothing");
  }

  @Test
  void theBudgetSizesMemtablesAndBlockCacheByRatioAndCount() {
    BackendMemory memory = BackendMemory.reserve(settings(), slot, 1.0);
    try {
      Map<String, String> engine =
          settings("memory.memtable-buffer-ratio", "0.25", "memory.memtable-buffer-count", "4")
              .engineConfig(memory.budgetBytes())
              .values();
      assertEquals(String.valueOf(SLOT / 16), engine.get("memtable.capacity"));
      assertEquals("4", engine.get("memory.memtable-buffer-count"));
      assertEquals(String.valueOf(SLOT - 4 * (SLOT / 16)), engine.get("block-cache.size"));
      // A backend of its own lends its cache the idle memtable buffers, as a pool does.
      assertEquals("true", engine.get("memory.lend-idle-memtable-buffers"));
    } finally {
      memory.close();
    }
    assertEquals(SLOT, slot.availableMemory());
  }

  @Test
  void aManagedShareAboveTheHeapsShareIsReservedWholeButPoolsOnlyTheHeapsShare() {
    // A 64 MiB heap over 2 slots: 16 MiB per slot, against a 32 MiB managed share.
    HeapShare heap = new HeapShare(SLOT, 2);
    BackendMemory memory = BackendMemory.reserve(settings(), slot, 0.5, heap);
    try {
      assertEquals(SLOT / 2, slot.availableMemory(), "the whole managed share is reserved");
      assertEquals(SLOT / 4, memory.budgetBytes());
      assertEquals(SLOT / 4, memory.pool().writeBufferBytes() + memory.pool().blockCacheBytes());
      assertEquals(SLOT / 16, memory.engineConfig(settings()).memtableCapacity());
    } finally {
      memory.close();
    }
    assertEquals(SLOT, slot.availableMemory());

    BackendMemory within = BackendMemory.reserve(settings(), slot, 0.25, heap);
    assertEquals(SLOT / 4, within.budgetBytes(), "a share within the heap's is used whole");
    within.close();
  }

  @Test
  void aFixedBudgetAboveTheHeapsShareIsAnErrorNamingTheOptions() {
    IllegalConfigurationException e =
        assertThrows(
            IllegalConfigurationException.class,
            () ->
                BackendMemory.reserve(
                    settings("memory.fixed-per-slot", "48mb", "memory.managed", "false"),
                    null,
                    0,
                    new HeapShare(128L << 20, 2)));
    assertEquals(
        "state.backend.cobble.memory.fixed-per-slot = 48 MiB is more than a slot may keep on this"
            + " TaskManager's heap. Cobble keeps its memtables and block cache on the JVM heap, and"
            + " the pools of all slots together may take half of it: half of the 128 MiB heap"
            + " over 2 slot(s) (taskmanager.numberOfTaskSlots) is 32 MiB per slot. Lower"
            + " state.backend.cobble.memory.fixed-per-slot, or raise"
            + " taskmanager.memory.task.heap.size.",
        e.getMessage());
    BackendMemory fits =
        BackendMemory.reserve(
            settings("memory.fixed-per-slot", "32mb"), null, 0, new HeapShare(128L << 20, 2));
    assertEquals(32L << 20, fits.budgetBytes());
  }

  @Test
  void aHeapShareTooSmallForTheMemtablesSaysTheHeapIsTheLimit() {
    IllegalConfigurationException e =
        assertThrows(
            IllegalConfigurationException.class,
            () -> BackendMemory.reserve(settings(), slot, 0.5, new HeapShare(32L << 10, 4)));
    assertTrue(e.getMessage().startsWith("A Cobble memory budget of 4096 bytes"), e.getMessage());
    assertTrue(
        e.getMessage().contains("not the slot's 32 MiB of managed memory")
            && e.getMessage().contains("half of the 32768 bytes heap over 4 slot(s)")
            && e.getMessage().endsWith("Raise taskmanager.memory.task.heap.size."),
        e.getMessage());
    assertEquals(SLOT, slot.availableMemory(), "nothing is reserved");
  }

  @Test
  void theSlotCountComesFromTheTaskManagerConfiguration() {
    assertEquals(1, settings().taskSlots());
    Configuration c = new Configuration();
    c.setString("taskmanager.numberOfTaskSlots", "6");
    assertEquals(6, CobbleStateSettings.fromConfig(c).taskSlots());
    assertEquals(6, CobbleStateSettings.fromConfig(c, new Configuration()).taskSlots());
  }

  private static CobbleStateSettings settings(String... keyValues) {
    Configuration c = new Configuration();
    for (int i = 0; i < keyValues.length; i += 2) {
      c.setString("state.backend.cobble." + keyValues[i], keyValues[i + 1]);
    }
    return CobbleStateSettings.fromConfig(c);
  }
}
