package io.cobble.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetadataFileTest {

  private static final byte[] PAYLOAD =
      "manifest: sst-000001 sst-000002".getBytes(StandardCharsets.UTF_8);

  @TempDir Path dir;

  @Test
  void roundTrip() throws IOException {
    assertArrayEquals(PAYLOAD, MetadataFile.decode(MetadataFile.encode(PAYLOAD)).orElseThrow());
    assertArrayEquals(
        new byte[0], MetadataFile.decode(MetadataFile.encode(new byte[0])).orElseThrow());
  }

  @Test
  void everyFlippedBitReadsAsAbsent() throws IOException {
    byte[] file = MetadataFile.encode(PAYLOAD);
    for (int i = 0; i < file.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] damaged = file.clone();
        damaged[i] ^= (byte) (1 << bit);
        assertEquals(Optional.empty(), MetadataFile.decode(damaged), "byte " + i + " bit " + bit);
      }
    }
  }

  @Test
  void truncatedOrExtendedOrForeignBytesReadAsAbsent() throws IOException {
    byte[] file = MetadataFile.encode(PAYLOAD);
    for (int length = 0; length < file.length; length++) {
      assertEquals(Optional.empty(), MetadataFile.decode(Arrays.copyOf(file, length)), "" + length);
    }
    assertEquals(Optional.empty(), MetadataFile.decode(Arrays.copyOf(file, file.length + 1)));
    assertEquals(Optional.empty(), MetadataFile.decode(PAYLOAD));
    assertEquals(Optional.empty(), MetadataFile.decode(new byte[64]));
  }

  @Test
  void anIntactFileOfANewerFormatIsAnErrorNotAbsence() {
    byte[] file = MetadataFile.encode(PAYLOAD);
    file[4] = (byte) (MetadataFile.FORMAT_VERSION + 1);
    CRC32C crc = new CRC32C();
    crc.update(file, 0, file.length - 4);
    ByteBuffer.wrap(file).putInt(file.length - 4, (int) crc.getValue());
    IOException failure = assertThrows(IOException.class, () -> MetadataFile.decode(file));
    assertTrue(failure.getMessage().contains("Upgrade Cobble"), failure.getMessage());
  }

  @Test
  void publishAndReadOnAFileSystem() throws IOException {
    try (Storage storage = StorageProviders.open(dir.toString(), StorageOptions.empty())) {
      assertEquals(Optional.empty(), MetadataFile.read(storage, "meta/CURRENT"));
      MetadataFile.publish(storage, "meta/CURRENT", PAYLOAD);
      assertArrayEquals(PAYLOAD, MetadataFile.read(storage, "meta/CURRENT").orElseThrow());
      MetadataFile.publish(storage, "meta/CURRENT", new byte[] {42});
      assertArrayEquals(new byte[] {42}, MetadataFile.read(storage, "meta/CURRENT").orElseThrow());
      // File systems replace in place: no generations, no temporary files left.
      assertEquals(List.of("meta/CURRENT"), storage.list(""));
    }
  }

  @Test
  void aDamagedFileOnDiskReadsAsAbsent() throws IOException {
    try (Storage storage = StorageProviders.open(dir.toString(), StorageOptions.empty())) {
      MetadataFile.publish(storage, "CURRENT", PAYLOAD);
      Path file = dir.resolve("CURRENT");
      byte[] bytes = Files.readAllBytes(file);
      bytes[bytes.length / 2] ^= 0x10;
      Files.write(file, bytes);
      assertEquals(Optional.empty(), MetadataFile.read(storage, "CURRENT"));
      Files.write(file, Arrays.copyOf(bytes, 5));
      assertEquals(Optional.empty(), MetadataFile.read(storage, "CURRENT"));
    }
  }
}
