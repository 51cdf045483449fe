package io.cobble.sst;

import io.cobble.iterator.FramedBlock;
import io.cobble.iterator.KvIterator;

/** The {@link FramedBlock} a sequential table cursor hands out: a view into its read buffers. */
final class ReadFramedBlock implements FramedBlock {
  private byte[] frame;
  private int frameOffset;
  private int payloadSize;
  private byte[] decoded;
  private int decodedLength;
  private byte[] lastKey;
  private int lastKeyLength;
  private boolean dataBlockHash;
  private final BlockIterator rows = new BlockIterator();

  ReadFramedBlock set(
      byte[] frame,
      int frameOffset,
      int payloadSize,
      byte[] decoded,
      int decodedLength,
      byte[] lastKey,
      int lastKeyLength,
      boolean dataBlockHash) {
    this.frame = frame;
    this.frameOffset = frameOffset;
    this.payloadSize = payloadSize;
    this.decoded = decoded;
    this.decodedLength = decodedLength;
    this.lastKey = lastKey;
    this.lastKeyLength = lastKeyLength;
    this.dataBlockHash = dataBlockHash;
    return this;
  }

  @Override
  public byte[] lastKey() {
    return lastKey;
  }

  @Override
  public int lastKeyLength() {
    return lastKeyLength;
  }

  @Override
  public KvIterator rows() {
    rows.reset(decoded, decodedLength);
    rows.seekToFirst();
    return rows;
  }

  @Override
  public byte[] frame() {
    return frame;
  }

  @Override
  public int frameOffset() {
    return frameOffset;
  }

  @Override
  public int frameLength() {
    return payloadSize + BlockHandle.TRAILER_SIZE;
  }

  @Override
  public boolean compressed() {
    return frame[frameOffset + payloadSize] == BlockCodec.LZ4;
  }

  @Override
  public boolean dataBlockHash() {
    return dataBlockHash;
  }
}
