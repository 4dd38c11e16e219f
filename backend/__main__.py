from backend.cli import main

main()
