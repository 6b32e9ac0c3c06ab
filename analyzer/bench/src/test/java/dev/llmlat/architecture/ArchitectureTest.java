package dev.llmlat.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The rules of ARCHITECTURE.md that the module graph alone does not enforce, over every module's
 * main classes (this module sees them all). Maven already refuses a module that uses one it does
 * not depend on.
 */
class ArchitectureTest {
  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("dev.llmlat");
  private static final Pattern MODULE =
      Pattern.compile("/([a-z-]+)/target/classes/|/llmlat-([a-z-]+?)(?:-\\d[^/]*)?\\.jar");

  /** Modules whose root is not their folder's name, the name kept short or the hyphen dropped. */
  private static final Map<String, String> ROOTS =
      Map.of(
          "gpu-import",
          "gpu",
          "otlp-kafka",
          "otlpkafka",
          "otlp-json",
          "otlpjson",
          "shared-traces",
          "sharedtraces",
          "imports",
          "imports",
          "engine-telemetry",
          "enginetelemetry",
          "agent-extension",
          "agent",
          "demo-engine",
          "engine",
          "scheduler-sdk",
          "scheduler",
          "ebpf-bridge",
          "ebpf");

  @Test
  void theAttributionCoreDependsOnTheContractAndStatisticsOnly() {
    classes()
        .that()
        .resideInAPackage("dev.llmlat.attribution..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "dev.llmlat.attribution..",
            "dev.llmlat.semconv..",
            "dev.llmlat.nvtx..",
            "dev.llmlat.stats..",
            "java..")
        .because(
            "attribution is a pure core over in-memory spans; the store and OTLP adapters live in analyze")
        .check(CLASSES);
  }

  @Test
  void eachModuleHasOnePackageRoot() {
    List<String> wrong = new ArrayList<>();
    Set<String> seen = new TreeSet<>();
    for (JavaClass c : CLASSES) {
      String module = moduleOf(c);
      if (module != null) {
        seen.add(module);
      }
      if (module == null || module.equals("schemas")) {
        continue; // the contract keeps the roots its users import, as OpenTelemetry's semconv does
      }
      String root = "dev.llmlat." + ROOTS.getOrDefault(module, module);
      if (!c.getPackageName().equals(root) && !c.getPackageName().startsWith(root + ".")) {
        wrong.add(c.getName() + " (module " + module + ", root " + root + ")");
      }
    }
    assertThat(seen)
        .as("modules whose classes were found")
        .contains(
            "attribution",
            "analyze",
            "store",
            "runtime",
            "ingest",
            "live",
            "cli",
            "gpu-import",
            "otlp-kafka",
            "otlp-json");
    assertThat(wrong).as("classes outside their module's package root").isEmpty();
  }

  /**
   * The module a class was compiled in: its {@code <module>/target/classes} folder or its {@code
   * llmlat-<module>} jar.
   */
  private static String moduleOf(JavaClass c) {
    return c.getSource()
        .map(
            source -> {
              Matcher m = MODULE.matcher(source.getUri().toString());
              return m.find() ? (m.group(1) != null ? m.group(1) : m.group(2)) : null;
            })
        .orElse(null);
  }

  @Test
  void internalPackagesAreUsedOnlyFromTheFeatureTheyBelongTo() {
    classes()
        .that()
        .resideInAPackage("..internal..")
        .should(onlyBeAccessedFromTheirFeature())
        .check(CLASSES);
  }

  @Test
  void statisticsAndTheContractDependOnNothingOfOurs() {
    noClasses()
        .that()
        .resideInAPackage("dev.llmlat.stats..")
        .should()
        .dependOnClassesThat()
        .resideOutsideOfPackages("dev.llmlat.stats..", "java..")
        .check(CLASSES);
    noClasses()
        .that()
        .resideInAnyPackage("dev.llmlat.semconv..", "dev.llmlat.nvtx..")
        .should()
        .dependOnClassesThat()
        .resideOutsideOfPackages("dev.llmlat.semconv..", "dev.llmlat.nvtx..", "java..")
        .check(CLASSES);
  }

  @Test
  void nothingDependsOnTheBenchmarks() {
    noClasses()
        .that()
        .resideOutsideOfPackage("dev.llmlat.bench..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("dev.llmlat.bench..")
        .check(CLASSES);
  }

  @Test
  void attributionsFeaturePackagesHaveNoCycles() {
    slices().matching("dev.llmlat.attribution.(*)..").should().beFreeOfCycles().check(CLASSES);
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
