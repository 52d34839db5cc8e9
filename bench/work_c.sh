# SPDX-License-Identifier: MIT
# work_c.sh (sourced by the benchmarks): write_work_c FILE writes a C file big enough to keep
# clang's optimizer busy for a while, the workload several benchmarks compile in a loop.
write_work_c() {
        {
                for i in $(seq 1 200); do
                        echo "static int f$i(int x) { int y = x; for (int k = 0; k < 10 + $i % 7; k++) y = y * 31 + k; return y; }"
                done
                echo "int main(int c, char **v) { int s = 0;"
                for i in $(seq 1 200); do echo "s += f$i(c);"; done
                echo "return s; }"
        } >"$1"
}
