/**
 * Hostile YAML shared by the tests and the benchmarks (issue 19), so that both measure and refuse the same
 * input: a "billion laughs" alias bomb, small in bytes and exponential once its aliases are expanded.
 */

/** The letter naming level `i` of a bomb (a, b, c, ...): anchors and keys alike. */
const level = (i: number): string => String.fromCharCode(97 + i);

/**
 * The mapping entries of an alias bomb of `levels` levels (at most 26): level `a` is a list of `width` scalars,
 * and every further level a list of `width` aliases of the one before, so the last expands to width^levels nodes.
 */
export function aliasBombEntries(levels: number, width = 10): string[] {
    if (!Number.isInteger(levels) || levels < 1 || levels > 26)
        throw new RangeError(`an alias bomb has 1 to 26 levels, not ${levels}`);
    const entries = [`a: &a [${Array(width).fill("x").join(", ")}]`];
    for (let i = 1; i < levels; i++)
        entries.push(
            `${level(i)}: &${level(i)} [${Array(width)
                .fill(`*${level(i - 1)}`)
                .join(", ")}]`,
        );
    return entries;
}

/** A ConfigMap document named `name` whose data is an alias bomb of `levels` levels (see aliasBombEntries). */
export function aliasBombConfigMap(name: string, levels: number, width = 10): string {
    const data = aliasBombEntries(levels, width).map((e) => `  ${e}`);
    return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${data.join("\n")}\n`;
}
