package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Checks every row of the Rust codec's golden vector table ({@code crates/zmtp/tests/vectors/
 * index.md}, read in place, not copied) against this codec, byte for byte. An unknown kind fails.
 */
class GoldenVectorsTest {
  static Path vectorsDir() {
    return Paths.get(System.getProperty("oxmq.vectors.dir", "../../crates/zmtp/tests/vectors"));
  }

  /** @return rows as {file, kind, expect, description} */
  static List<String[]> rows() throws IOException {
    List<String[]> rows = new ArrayList<>();
    boolean inTable = false;
    for (String line : Files.readAllLines(vectorsDir().resolve("index.md"))) {
      if (!line.startsWith("|")) {
        inTable = false;
        continue;
      }
      String[] cells = line.split("\\|", -1);
      if (cells.length < 5) {
        continue;
      }
      String file = cells[1].trim();
      if (file.equals("file")) {
        inTable = true;
        continue;
      }
      if (!inTable || file.startsWith("-")) {
        continue;
      }
      rows.add(new String[] {file, cells[2].trim(), cells[3].trim(), cells[4].trim()});
    }
    return rows;
  }

  @TestFactory
  List<DynamicTest> everyRow() throws IOException {
    List<String[]> rows = rows();
    assertTrue(rows.size() >= 30, "expected the vector table, found " + rows.size() + " rows");
    List<DynamicTest> tests = new ArrayList<>();
    for (String[] r : rows) {
      String file = r[0];
      String kind = r[1];
      String expect = r[2];
      tests.add(DynamicTest.dynamicTest(file + " as " + kind + " -> " + expect, () -> {
        byte[] bytes = Files.readAllBytes(vectorsDir().resolve(file));
        assertEquals(expect, VectorCheck.run(kind, bytes), r[3]);
      }));
    }
    return tests;
  }
}
