from jobmanager.client.cli import main

main()
