package io.cobble.storage.s3;

import io.cobble.storage.StorageOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * Buffers a file and uploads it at close: a single PUT when it fits in one part, otherwise a
 * multipart upload with a part sent each time the buffer fills. Until close completes, the object
 * does not exist, so readers never see a partial file.
 */
final class S3Output extends StorageOutput {

  private static final int INITIAL_BUFFER = 64 * 1024;

  private final S3Storage storage;
  private final String path;
  private final int partSize;
  private final List<CompletedPart> parts = new ArrayList<>();
  private byte[] buffer;
  private int buffered;
  private long position;
  private String uploadId;
  private boolean closed;
  private boolean failed;

  S3Output(S3Storage storage, String path, int partSize) {
    this.storage = storage;
    this.path = path;
    this.partSize = partSize;
    this.buffer = new byte[Math.min(INITIAL_BUFFER, partSize)];
  }

  @Override
  public void write(int b) throws IOException {
    ensureWritable();
    if (buffered == partSize) {
      sendPart();
    }
    ensureCapacity(buffered + 1);
    buffer[buffered++] = (byte) b;
    position++;
  }

  @Override
  public void write(byte[] bytes, int offset, int length) throws IOException {
    ensureWritable();
    while (length > 0) {
      if (buffered == partSize) {
        sendPart();
      }
      int chunk = Math.min(length, partSize - buffered);
      ensureCapacity(buffered + chunk);
      System.arraycopy(bytes, offset, buffer, buffered, chunk);
      buffered += chunk;
      position += chunk;
      offset += chunk;
      length -= chunk;
    }
  }

  /** Nothing is durable before close on an object store. */
  @Override
  public boolean sync() throws IOException {
    ensureWritable();
    return false;
  }

  @Override
  public long position() {
    return position;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    if (failed) {
      throw new IOException(
          "Upload of " + storage.describe(path) + " failed earlier; the object was not written.");
    }
    try {
      if (uploadId == null) {
        storage.putObject(path, body());
      } else {
        sendPart();
        storage.completeMultipart(path, uploadId, parts);
      }
    } catch (IOException | RuntimeException e) {
      abort(e);
      throw e;
    } finally {
      buffer = null;
    }
  }

  private void sendPart() throws IOException {
    try {
      if (uploadId == null) {
        uploadId = storage.startMultipart(path);
      }
      int number = parts.size() + 1;
      String etag = storage.uploadPart(path, uploadId, number, body());
      parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
      buffered = 0;
    } catch (IOException | RuntimeException e) {
      failed = true;
      abort(e);
      throw e;
    }
  }

  private RequestBody body() {
    // fromByteBuffer copies the bytes, so the buffer can be reused while the SDK retries.
    return RequestBody.fromByteBuffer(ByteBuffer.wrap(buffer, 0, buffered));
  }

  private void abort(Throwable failure) {
    if (uploadId != null) {
      storage.abortMultipart(path, uploadId, failure);
      uploadId = null;
    }
  }

  private void ensureCapacity(int needed) {
    if (needed > buffer.length) {
      buffer = Arrays.copyOf(buffer, Math.min(partSize, Math.max(needed, buffer.length * 2)));
    }
  }

  private void ensureWritable() throws IOException {
    if (closed) {
      throw new IOException("Output for " + storage.describe(path) + " is closed.");
    }
    if (failed) {
      throw new IOException(
          "Upload of " + storage.describe(path) + " failed earlier; the object was not written.");
    }
  }
}
