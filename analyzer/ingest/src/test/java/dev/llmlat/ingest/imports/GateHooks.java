package dev.llmlat.ingest.imports;

import dev.llmlat.imports.ImportedFile;

/** Hooks that stop at {@link Gates} named by point, side (store or kafka) and import id. */
final class GateHooks implements ImportHooks {
  private final Gates gates;

  GateHooks(Gates gates) {
    this.gates = gates;
  }

  static String claiming(String side, String id) {
    return "claiming " + side + " " + id;
  }

  static String claimed(String side, String id) {
    return "claimed " + side + " " + id;
  }

  static String kafkaCommit(String id) {
    return "kafka commit " + id;
  }

  static String storeCommit(String id) {
    return "store commit " + id;
  }

  static String ingesterInsert(String id) {
    return "ingester insert " + id;
  }

  private static String side(String claimant) {
    return claimant.substring(0, claimant.indexOf(':'));
  }

  @Override
  public void claiming(String importId, long epoch, String claimant) {
    gates.pass(claiming(side(claimant), importId));
  }

  @Override
  public void claimed(String importId, String claimant, ImportClaim winner) {
    gates.pass(claimed(side(claimant), importId));
  }

  @Override
  public void kafkaCommitting(ImportedFile file) {
    gates.pass(kafkaCommit(file.id()));
  }

  @Override
  public void storeCommitting(ImportedFile file) {
    gates.pass(storeCommit(file.id()));
  }
}
