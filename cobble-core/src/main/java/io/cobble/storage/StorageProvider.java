package io.cobble.storage;

import java.io.IOException;
import java.net.URI;
import java.util.Set;

/**
 * Opens {@link Storage} for the URI schemes it serves. Implementations are found with {@link
 * java.util.ServiceLoader} (see {@link StorageProviders}), so a new backend is a jar with a {@code
 * META-INF/services/io.cobble.storage.StorageProvider} entry; nothing in the engine names it.
 */
public interface StorageProvider {

  /** Lower-case URI schemes this provider serves, for example {@code file} or {@code s3}. */
  Set<String> schemes();

  /**
   * The option keys this provider accepts (the suffixes of {@code storage.option.<key>}), for
   * messages and documentation. {@link #open} rejects any other key, naming these. A provider whose
   * keys are open-ended (a Hadoop or Flink file system delegate passing {@code fs.*} through) lists
   * them as patterns such as {@code fs.*} and checks them itself.
   */
  Set<String> optionKeys();

  /**
   * Opens storage rooted at {@code base}. Options arrive exactly as the user wrote them.
   *
   * @throws IllegalArgumentException if the URI or an option is invalid; the message names the
   *     option and what to change
   * @throws IOException if the storage cannot be reached or prepared
   */
  Storage open(URI base, StorageOptions options) throws IOException;
}
