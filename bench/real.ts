/** The benchmark's parts that need the real toolchain (filled in with the real leg). */
export async function realBenchmarks(line: (s: string) => void): Promise<Record<string, unknown>> {
    line("== real preview: not measured (toolchain benchmarks pending)");
    return { realPreview: "not measured" };
}
