package io.cobble.storage.file;

import io.cobble.storage.MetadataFile;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Child process for {@link FileStorageCrashTest}: publishes numbered metadata of varying size until
 * it is killed. Each payload is its number repeated, so a reader can check it is whole.
 */
public final class PublishLoop {

  private PublishLoop() {}

  public static void main(String[] args) throws Exception {
    try (Storage storage = StorageProviders.open(args[0], StorageOptions.empty())) {
      for (int i = 1; ; i++) {
        MetadataFile.publish(storage, "meta/CURRENT", payload(i));
      }
    }
  }

  static byte[] payload(int number) {
    byte[] unit = (number + ";").getBytes(StandardCharsets.UTF_8);
    int copies = 1 + (number * 7919) % 5000;
    byte[] payload = new byte[unit.length * copies];
    for (int i = 0; i < copies; i++) {
      System.arraycopy(unit, 0, payload, i * unit.length, unit.length);
    }
    return payload;
  }

  /** The number a payload was built from, or -1 if it is not a whole payload. */
  static int numberOf(byte[] payload) {
    String text = new String(payload, StandardCharsets.UTF_8);
    int end = text.indexOf(';');
    if (end < 0) {
      return -1;
    }
    int number = Integer.parseInt(text.substring(0, end));
    return Arrays.equals(payload, payload(number)) ? number : -1;
  }
}
