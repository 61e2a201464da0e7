from translator.cli import main

main()
