package dev.llmlat.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.Test;

/**
 * The rules of ARCHITECTURE.md that the module graph alone does not enforce, over every module's main classes (this
 * module sees them all). Maven already refuses a module that uses one it does not depend on.
 */
class ArchitectureTest {
  private static final JavaClasses CLASSES = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("dev.llmlat");

  @Test
  void theAttributionCoreKnowsNoStoreNoBrokerAndNoImporter() {
    noClasses().that().resideInAnyPackage("dev.llmlat.analyze", "dev.llmlat.analyze.engines..")
        .should().dependOnClassesThat().resideInAnyPackage("dev.llmlat.store..", "dev.llmlat.schema..", "dev.llmlat.spans..",
            "dev.llmlat.imports..", "dev.llmlat.gpu..", "org.apache.kafka..", "com.clickhouse..", "io.opentelemetry.proto..",
            "com.google.protobuf..")
        .because("attribution is a pure core over in-memory spans; the store and OTLP adapters live in analyze.store and analyze.otlp")
        .check(CLASSES);
  }

  @Test
  void internalPackagesAreUsedOnlyFromTheFeatureTheyBelongTo() {
    classes().that().resideInAPackage("..internal..").should(onlyBeAccessedFromTheirFeature()).check(CLASSES);
  }

  @Test
  void statisticsAndTheContractDependOnNothingOfOurs() {
    noClasses().that().resideInAPackage("dev.llmlat.stats..").should().dependOnClassesThat()
        .resideOutsideOfPackages("dev.llmlat.stats..", "java..").check(CLASSES);
    noClasses().that().resideInAnyPackage("dev.llmlat.semconv..", "dev.llmlat.nvtx..").should().dependOnClassesThat()
        .resideOutsideOfPackages("dev.llmlat.semconv..", "dev.llmlat.nvtx..", "java..").check(CLASSES);
  }

  @Test
  void nothingDependsOnTheBenchmarks() {
    noClasses().that().resideOutsideOfPackage("dev.llmlat.bench..").should().dependOnClassesThat()
        .resideInAPackage("dev.llmlat.bench..").check(CLASSES);
  }

  @Test
  void attributionsFeaturePackagesHaveNoCycles() {
    slices().matching("dev.llmlat.analyze.(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  /** Accessed only from classes under the package the {@code internal} package sits in. */
  private static ArchCondition<JavaClass> onlyBeAccessedFromTheirFeature() {
    return new ArchCondition<>("only be accessed from the package their internal package sits in") {
      @Override
      public void check(JavaClass target, ConditionEvents events) {
        String pkg = target.getPackageName();
        String feature = pkg.substring(0, pkg.indexOf(".internal"));
        for (JavaAccess<?> access : target.getAccessesToSelf()) {
          String from = access.getOriginOwner().getPackageName();
          if (!from.equals(feature) && !from.startsWith(feature + ".")) {
            events.add(SimpleConditionEvent.violated(access, access.getDescription()));
          }
        }
      }
    };
  }
}
