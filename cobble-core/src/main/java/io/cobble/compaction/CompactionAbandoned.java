package io.cobble.compaction;

/**
 * Thrown by a compaction that stopped because its database is closing: nothing of it was installed,
 * and its outputs are to be discarded, not reported as a failure.
 */
public final class CompactionAbandoned extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public CompactionAbandoned() {
    super("compaction abandoned: the database is closing", null, false, false);
  }
}
