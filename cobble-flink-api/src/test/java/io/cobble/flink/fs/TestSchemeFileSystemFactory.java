package io.cobble.flink.fs;

import java.io.IOException;
import java.net.URI;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * A Flink file system for the scheme {@code cobbletest}, found by Flink the way plugins' factories
 * are (a service entry): local files, reachable only with an account key in its configuration under
 * a dotted key, as Azure's {@code fs.azure.account.key.<account>}. It stands for a scheme no Cobble
 * provider serves and that needs a secret setting.
 */
public final class TestSchemeFileSystemFactory implements FileSystemFactory {

  static final String SCHEME = "cobbletest";
  static final String ACCOUNT_KEY = "fs.cobbletest.account.key.acct";
  static final String SECRET = "Acct-Key-7f3e-must-stay-secret";

  private String accountKey;

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public void configure(Configuration config) {
    accountKey = config.toMap().get(ACCOUNT_KEY);
  }

  @Override
  public FileSystem create(URI fsUri) throws IOException {
    if (!SECRET.equals(accountKey)) {
      throw new IOException("Access denied: '" + ACCOUNT_KEY + "' is not set to the account key");
    }
    // Flink's local file system reads only the path of a URI, whatever its scheme.
    return new LocalFileSystem();
  }
}
