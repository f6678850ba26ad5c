from jobmanager.cli import main

main()
