"""``python -m evalkit``: the CLI. Guarded, because the Dask engine's LocalCluster starts worker
processes by spawning, which imports the main module again under another name."""

from evalkit.cli import main

if __name__ == "__main__":
    main()
