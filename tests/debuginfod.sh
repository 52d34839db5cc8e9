#!/usr/bin/env bash
# placeholder
echo "0 passed, 0 failed, 1 skipped"
