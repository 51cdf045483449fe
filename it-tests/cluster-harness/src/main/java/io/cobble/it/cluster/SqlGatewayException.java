package io.cobble.it.cluster;

/** A statement the SQL Gateway rejected or failed; the message holds the gateway's error text. */
public final class SqlGatewayException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String statement;

  public SqlGatewayException(String statement, String message) {
    super(message);
    this.statement = statement;
  }

  public String statement() {
    return statement;
  }
}
