package io.cobble.storage.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageInput;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageOutput;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyExtension;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The s3 provider against a real S3Proxy with signature authentication. */
@Timeout(120)
class S3StorageTest {

  static final String BUCKET = "cobble-test";

  @RegisterExtension static final S3ProxyExtension S3 = new S3ProxyExtension(BUCKET);

  /**
   * Bounds that only stop a hang: these calls must succeed, and on a loaded 2-core machine a
   * healthy call (the first one loads the SDK, a multipart upload moves 11 MB) can stall for
   * seconds.
   */
  static Map<String, String> options() {
    Map<String, String> options = S3.server().clientOptions();
    options.put("api_call_timeout", "60s");
    options.put("api_call_attempt_timeout", "20s");
    return options;
  }

  static Storage open(String prefix, Map<String, String> options) throws IOException {
    return StorageProviders.open(
        URI.create("s3://" + BUCKET + "/" + prefix), StorageOptions.of(options));
  }

  @Test
  void roundTripOfEveryOperation() throws IOException {
    try (Storage storage = open("round-trip", options())) {
      byte[] data = "hello, object store".getBytes(StandardCharsets.UTF_8);
      try (StorageOutput out = storage.create("dir/a.sst")) {
        out.write(data);
        assertFalse(out.sync(), "an object store cannot make a partial object durable");
        assertEquals(data.length, out.position());
      }
      assertTrue(storage.exists("dir/a.sst"));
      assertFalse(storage.exists("dir/missing.sst"));
      assertEquals(data.length, storage.length("dir/a.sst"));
      assertArrayEquals(data, storage.readAll("dir/a.sst"));
      try (StorageInput in = storage.open("dir/a.sst")) {
        assertEquals(data.length, in.length());
        assertArrayEquals("object".getBytes(StandardCharsets.UTF_8), in.read(7, 6));
        assertThrows(EOFException.class, () -> in.read(data.length - 2, 3));
      }

      storage.create("empty").close();
      assertEquals(0, storage.length("empty"));
      assertArrayEquals(new byte[0], storage.readAll("empty"));
      storage.delete("empty");

      try (StorageOutput out = storage.create("bytes")) {
        for (int i = 0; i < 10; i++) {
          out.write(i);
        }
      }
      assertArrayEquals(new byte[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, storage.readAll("bytes"));
      storage.delete("bytes");

      storage.publishAtomically("meta/CURRENT", new byte[] {1, 2, 3});
      storage.publishAtomically("meta/CURRENT", new byte[] {4, 5});
      assertArrayEquals(new byte[] {4, 5}, storage.readAll("meta/CURRENT"));

      storage.rename("dir/a.sst", "dir/b.sst");
      assertFalse(storage.exists("dir/a.sst"));
      assertArrayEquals(data, storage.readAll("dir/b.sst"));

      assertEquals(List.of("dir/b.sst", "meta/CURRENT"), storage.list(""));
      assertEquals(List.of("dir/b.sst"), storage.list("dir/"));
      assertEquals(List.of("meta/CURRENT"), storage.list("me"));

      storage.delete("dir/b.sst");
      storage.delete("dir/b.sst");
      assertFalse(storage.exists("dir/b.sst"));
      assertThrows(NoSuchFileException.class, () -> storage.readAll("dir/b.sst"));
      assertThrows(NoSuchFileException.class, () -> storage.length("dir/b.sst"));
      assertThrows(NoSuchFileException.class, () -> storage.open("dir/b.sst"));
    }
  }

  @Test
  void createExclusivelyRefusesAnExistingKey() throws IOException {
    try (Storage storage = open("exclusive", options())) {
      byte[] first = "first".getBytes(StandardCharsets.UTF_8);
      assertTrue(storage.createExclusively("meta/v-1", first));
      assertFalse(storage.createExclusively("meta/v-1", "second".getBytes(StandardCharsets.UTF_8)));
      assertArrayEquals(first, storage.readAll("meta/v-1"));
      // A retried request whose first attempt landed finds its own bytes: not a conflict.
      assertTrue(storage.createExclusively("meta/v-1", first.clone()));
    }
  }

  @Test
  void multipartUploadAndRangedReadsAcrossParts() throws IOException {
    Map<String, String> options = options();
    options.put("part_size", "5mb");
    byte[] data = new byte[11 * 1024 * 1024 + 123];
    new Random(42).nextBytes(data);
    try (Storage storage = open("multipart", options)) {
      try (StorageOutput out = storage.create("big.sst")) {
        for (int offset = 0; offset < data.length; offset += 1_000_003) {
          out.write(data, offset, Math.min(1_000_003, data.length - offset));
        }
      }
      assertEquals(data.length, storage.length("big.sst"));
      assertArrayEquals(data, storage.readAll("big.sst"));
      try (StorageInput in = storage.open("big.sst")) {
        int at = 5 * 1024 * 1024 - 10;
        byte[] expected = Arrays.copyOfRange(data, at, at + 4096);
        assertArrayEquals(expected, in.read(at, 4096));
      }
    }
  }

  @Test
  void deleteAllUsesBatchesAndIgnoresMissingKeys() throws IOException {
    try (Storage storage = open("batch", options())) {
      List<String> paths = new ArrayList<>();
      for (int i = 0; i < 25; i++) {
        String path = "f/" + i;
        storage.publishAtomically(path, new byte[] {(byte) i});
        paths.add(path);
      }
      paths.add("f/never-written");
      storage.deleteAll(paths);
      assertEquals(List.of(), storage.list("f/"));
    }
  }

  @Test
  void metadataIsPublishedWriteOnceBehindAPointer() throws IOException {
    try (Storage storage = open("metadata", options())) {
      assertFalse(storage.atomicRename());
      assertEquals(Optional.empty(), MetadataFile.read(storage, "meta/CURRENT"));
      MetadataFile.publish(storage, "meta/CURRENT", new byte[] {1});
      MetadataFile.publish(storage, "meta/CURRENT", new byte[] {2, 2});
      assertArrayEquals(new byte[] {2, 2}, MetadataFile.read(storage, "meta/CURRENT").get());

      // The pointer plus the one live generation; the replaced generation is gone.
      List<String> files = storage.list("meta/");
      assertEquals(2, files.size(), files.toString());
      assertEquals("meta/CURRENT", files.get(0));
      String generation = files.get(1);
      assertTrue(generation.startsWith("meta/CURRENT" + MetadataFile.GENERATION_INFIX), generation);
      assertArrayEquals(new byte[] {2, 2}, MetadataFile.decode(storage.readAll(generation)).get());
    }
  }

  @Test
  void flippedBytesInPointerOrGenerationReadAsAbsent() throws IOException {
    try (Storage storage = open("flipped", options())) {
      MetadataFile.publish(storage, "CURRENT", "state".getBytes(StandardCharsets.UTF_8));
      String generation = storage.list("CURRENT" + MetadataFile.GENERATION_INFIX).get(0);
      for (String damaged : List.of(generation, "CURRENT")) {
        byte[] intact = storage.readAll(damaged);
        for (int i = 0; i < intact.length; i += 3) {
          byte[] bytes = intact.clone();
          bytes[i] ^= 0x01;
          storage.publishAtomically(damaged, bytes);
          assertEquals(
              Optional.empty(), MetadataFile.read(storage, "CURRENT"), damaged + " byte " + i);
        }
        storage.publishAtomically(damaged, intact);
        assertArrayEquals(
            "state".getBytes(StandardCharsets.UTF_8), MetadataFile.read(storage, "CURRENT").get());
      }
      storage.delete(generation);
      assertEquals(Optional.empty(), MetadataFile.read(storage, "CURRENT"));
    }
  }

  /**
   * As inside Flink's child-first user class loader: Cobble and the SDK in their own loader, and a
   * context class loader that sees neither.
   */
  @Test
  void worksInAnIsolatedClassLoaderWithAForeignContextLoader() throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      boolean cobbleMain = entry.endsWith("classes") && !entry.endsWith("test-classes");
      if (cobbleMain
          || entry.contains("awssdk")
          || entry.contains("reactive-streams")
          || entry.contains("slf4j-api")) {
        urls.add(Paths.get(entry).toUri().toURL());
      }
    }
    ClassLoader platform = ClassLoader.getPlatformClassLoader();
    Thread thread = Thread.currentThread();
    ClassLoader previousContext = thread.getContextClassLoader();
    try (URLClassLoader isolated = new URLClassLoader(urls.toArray(new URL[0]), platform);
        URLClassLoader foreign = new URLClassLoader(new URL[0], platform)) {
      Class<?> optionsClass = isolated.loadClass("io.cobble.storage.StorageOptions");
      assertTrue(optionsClass != StorageOptions.class, "must be a second copy of Cobble");
      Object options = optionsClass.getMethod("of", Map.class).invoke(null, options());
      thread.setContextClassLoader(foreign);
      Object storage =
          isolated
              .loadClass("io.cobble.storage.StorageProviders")
              .getMethod("open", String.class, optionsClass)
              .invoke(null, "s3://" + BUCKET + "/isolated", options);
      Class<?> storageClass = isolated.loadClass("io.cobble.storage.Storage");
      storageClass
          .getMethod("publishAtomically", String.class, byte[].class)
          .invoke(storage, "f", new byte[] {5, 6});
      assertArrayEquals(
          new byte[] {5, 6},
          (byte[]) storageClass.getMethod("readAll", String.class).invoke(storage, "f"));
      storageClass.getMethod("close").invoke(storage);
    } finally {
      thread.setContextClassLoader(previousContext);
    }
  }
}
