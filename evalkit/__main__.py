from evalkit.cli import main

main()
