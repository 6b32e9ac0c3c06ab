package dev.llmlat.bench;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The live heap of another JVM on this machine: attaches to it (Attach API), starts its local JMX
 * agent, and reads heap used right after a full collection it asks for, so the figure is what the
 * process retains, not how much garbage happens to be waiting.
 */
final class JvmHeapProbe implements AutoCloseable {
  private final JMXConnector connector;
  private final MemoryMXBean memory;

  // BanJNDI: the address is the one the target's own local agent returned through the Attach API,
  // a stub on this machine, never input
  @SuppressWarnings("BanJNDI")
  JvmHeapProbe(long pid) throws IOException {
    String address;
    try {
      VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
      try {
        address = vm.startLocalManagementAgent();
      } finally {
        vm.detach();
      }
    } catch (com.sun.tools.attach.AttachNotSupportedException e) {
      throw new IOException("cannot attach to process " + pid + ": " + e.getMessage(), e);
    }
    connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
    memory =
        ManagementFactory.newPlatformMXBeanProxy(
            connector.getMBeanServerConnection(),
            ManagementFactory.MEMORY_MXBEAN_NAME,
            MemoryMXBean.class);
  }

  /** Bytes of heap in use after a full GC of the target. */
  long liveHeapBytes() {
    memory.gc();
    return memory.getHeapMemoryUsage().getUsed();
  }

  @Override
  public void close() throws IOException {
    connector.close();
  }
}
