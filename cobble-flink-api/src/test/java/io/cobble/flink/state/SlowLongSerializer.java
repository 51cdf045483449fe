package io.cobble.flink.state;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A long serializer (the same bytes as Flink's) that reads slowly once the system property {@value
 * #PROGRESS} names a file, which it creates after its first reads: an import that uses it is
 * observably under way and far from done.
 */
public final class SlowLongSerializer extends TypeSerializerSingleton<Long> {

  static final String PROGRESS = "cobble.test.slow-progress";
  static final SlowLongSerializer INSTANCE = new SlowLongSerializer();
  private static int reads;

  /** Whether an import into {@code dbDir} has read rows (the child signals through a file). */
  static boolean started(Path dbDir) {
    return Files.exists(dbDir.resolveSibling(dbDir.getFileName() + ".progress"));
  }

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public Long createInstance() {
    return 0L;
  }

  @Override
  public Long copy(Long from) {
    return from;
  }

  @Override
  public Long copy(Long from, Long reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return 8;
  }

  @Override
  public void serialize(Long record, DataOutputView target) throws IOException {
    target.writeLong(record);
  }

  @Override
  public Long deserialize(DataInputView source) throws IOException {
    String progress = System.getProperty(PROGRESS);
    if (progress != null) {
      if (++reads == 50) {
        try {
          Files.createFile(Paths.get(progress));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
    }
    return source.readLong();
  }

  @Override
  public Long deserialize(Long reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    target.writeLong(source.readLong());
  }

  @Override
  public TypeSerializerSnapshot<Long> snapshotConfiguration() {
    return new Snapshot();
  }

  /** Restores the singleton. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<Long> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
