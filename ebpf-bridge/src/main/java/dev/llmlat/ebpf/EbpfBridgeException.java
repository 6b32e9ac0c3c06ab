package dev.llmlat.ebpf;

/** Why the bridge could not start or did not finish; subclasses name the problem. */
public class EbpfBridgeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public EbpfBridgeException(String message) {
    super(message);
  }

  public EbpfBridgeException(String message, Throwable cause) {
    super(message, cause);
  }
}
